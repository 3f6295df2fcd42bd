-- `bitwire gen`: code from a definitions file.
--   bitwire gen c defs.lua -o DIR [--name NAME] [--prefix P]  -> DIR/NAME.h, DIR/NAME.c
--   bitwire gen serialize-h defs.lua [-o DIR] [--name NAME]   -> DIR/NAME.hpp
--   bitwire gen c defs.lua -o DIR --blob                     -> DIR/NAME_blob.h (bitwire.gen.blob)
local M = {}

M.summary = "generate C (gen c) or serialize.h C++ (gen serialize-h) from definitions"
M.usage = [[
usage: bitwire gen c DEFS.lua -o DIR [--name NAME] [--prefix P] [--version N]
                     [--blob]
       bitwire gen serialize-h DEFS.lua [-o DIR] [--name NAME] [--prefix P]
                               [--version N]

NAME defaults to the definitions file's name without its extension; the C
files are NAME.h and NAME.c (with --blob, the blob header NAME_blob.h), the
C++ header NAME.hpp, written in DIR (serialize-h: the current directory
without -o). The code speaks version N of the definitions (default: the
current one).
]]

-- The options as cliutil reads every subcommand's (numbers, repeats); its
-- errors become this module's kind, a message raised without a position.
local function parse(args)
  local util = require "bitwire.cliutil"
  local ok, pos, opts = pcall(util.parse, args, { flags = { blob = true },
    options = { o = true, name = true, prefix = true, version = true } }, M.usage)
  if not ok then error(util.message(pos), 0) end
  opts.rest, opts.dir = pos, opts.o
  return opts
end

-- Write the files of 'files' ({path, text} each) whole or not at all:
-- each goes to a temporary file first, so one that cannot be written
-- leaves none behind, and no old one cut short. Reports each on 'out'.
local function write(out, files)
  local tmps, moved = {}, 0
  local function undo(err)
    for i = moved + 1, #tmps do os.remove(tmps[i]) end
    error(err, 0)
  end
  for i, file in ipairs(files) do
    local tmp = file[1] .. ".tmp"
    local f, err = io.open(tmp, "w")
    if not f then  -- named as the file asked for, not its temporary
      local why = err:sub(1, #tmp + 2) == tmp .. ": " and err:sub(#tmp + 3) or err
      undo(("%s: %s"):format(file[1], why))
    end
    tmps[i] = tmp
    local ok, why = require("bitwire.cliutil").writeclose(f, file[2], file[1])
    if not ok then undo(why) end
  end
  for i, file in ipairs(files) do
    local ok, err = os.rename(tmps[i], file[1])
    if not ok then undo(("%s: %s"):format(file[1], err)) end  -- err names no file
    moved = i
    out:write("wrote ", file[1], "\n")
  end
end

function M.run(args, sysio)
  local out = sysio and sysio.stdout or io.stdout
  local bitwire = require "bitwire"
  local o = parse(args or {})
  local what, defs = o.rest[1], o.rest[2]
  -- one line saying what is wrong, then the usage
  local function usage(fmt, ...) error(fmt:format(...) .. "\n" .. M.usage, 0) end
  if what == nil then usage("missing generator (c or serialize-h)") end
  if what ~= "c" and what ~= "serialize-h" then
    usage("unknown generator '%s' (c or serialize-h)", what)
  end
  if defs == nil then usage("missing definitions file") end
  if o.rest[3] then usage("unexpected argument '%s'", o.rest[3]) end
  -- "" would put the files in /, and - is no directory to write files in
  if o.dir == "" or o.dir == "-" then
    usage("-o takes a directory, not '%s'", o.dir)
  end
  if o.blob and what ~= "c" then error("--blob is an option of gen c\n" .. M.usage, 0) end
  local s = require("bitwire.cliutil").loadschema(defs)   -- its errors name the file
  -- the file's name without its extension (.lua or any other)
  local base = defs:match("[^/\\]*$")
  local name = o.name or base:match("^(.+)%.[^.]*$") or base
  if not name:match("^[%w_][%w_.-]*$") then  -- a file name in DIR, no path
    error(("%s '%s' is no file name (letters, digits, _, . and -, not"
      .. " starting with . or -)%s"):format(o.name and "--name" or "NAME",
      name, o.name and "" or "; it comes from " .. defs .. ": give --name"), 0)
  end
  local dir = (o.dir or "."):gsub("/$", "")
  local opts = { name = name, prefix = o.prefix, version = o.version }
  -- a generator's refusal (a name C cannot take) names the file, as the
  -- schema's errors do
  local function generate(fn, ...)
    local ok, res = pcall(fn, ...)
    if not ok then error(defs .. ": " .. (tostring(res):gsub("^[^\n]-%.lua:%d+: ", "")), 0) end
    return res
  end
  if what == "c" then
    if o.dir == nil then error("gen c needs -o DIR\n" .. M.usage, 0) end
    if o.blob then
      local ok, blob = pcall(require, "bitwire.gen.blob")
      if not ok then error("gen c --blob: bitwire.gen.blob is not installed", 0) end
      -- a macro name: a leading digit (--name 3d) gets an X, as gen c's guard
      local guard = name:upper():gsub("[^%w]", "_"):gsub("^%d", "X%0")
      write(out, { { dir .. "/" .. name .. "_blob.h",
        generate(blob.generate, s, { prefix = opts.prefix, version = opts.version,
          guard = guard .. "_BLOB_H" }) } })
      return 0
    end
    local code = generate(bitwire.gen.c, s, opts)
    write(out, { { dir .. "/" .. name .. ".h", code.header },
                 { dir .. "/" .. name .. ".c", code.source } })
  else
    write(out, { { dir .. "/" .. name .. ".hpp", generate(bitwire.gen.serialize_h, s, opts) } })
  end
  return 0
end

return M
