-- `bitwire gen`: code from a definitions file.
--   bitwire gen c defs.lua -o DIR [--name NAME] [--prefix P]  -> DIR/NAME.h, DIR/NAME.c
--   bitwire gen serialize-h defs.lua [-o DIR] [--name NAME]   -> DIR/NAME.hpp
--   bitwire gen c defs.lua -o DIR --blob                     -> DIR/NAME_blob.h (bitwire.gen.blob)
local M = {}

M.summary = "generate C (gen c) or serialize.h C++ (gen serialize-h) from definitions"
M.usage = [[
usage: bitwire gen c DEFS.lua -o DIR [--name NAME] [--prefix P] [--version N]
       bitwire gen serialize-h DEFS.lua [-o DIR] [--name NAME] [--prefix P]
                               [--version N]
NAME defaults to the definitions file's name; the C files are NAME.h and
NAME.c, the C++ header NAME.hpp. The code speaks version N of the
definitions (default: the current one).]]

local function parse(args)
  local o = { rest = {} }
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "-o" or a == "--name" or a == "--prefix" or a == "--version" then
      if args[i + 1] == nil then error(a .. " needs a value", 0) end
      o[a == "-o" and "dir" or a:sub(3)] = args[i + 1]
      i = i + 2
    elseif a == "--blob" then
      o.blob = true
      i = i + 1
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      error("unknown option " .. a, 0)
    else
      o.rest[#o.rest + 1] = a
      i = i + 1
    end
  end
  return o
end

local function write(path, text)
  local f, err = io.open(path, "w")
  if not f then error(err, 0) end
  f:write(text)
  f:close()
  io.write("wrote ", path, "\n")
end

function M.run(args)
  local bitwire = require "bitwire"
  local o = parse(args or {})
  local what, defs = o.rest[1], o.rest[2]
  if (what ~= "c" and what ~= "serialize-h") or defs == nil or o.rest[3] then
    error(M.usage, 0)
  end
  local s = require("bitwire.cliutil").loadschema(defs)   -- its errors name the file
  local name = o.name or defs:match("([^/\\]+)%.lua$") or "messages"
  local dir = (o.dir or "."):gsub("/$", "")
  local version = o.version and math.tointeger(tonumber(o.version))
  if o.version and not version then error("--version needs an integer", 0) end
  local opts = { name = name, prefix = o.prefix, version = version }
  if what == "c" then
    if o.dir == nil then error("gen c needs -o DIR\n" .. M.usage, 0) end
    if o.blob then
      local ok, blob = pcall(require, "bitwire.gen.blob")
      if not ok then error("gen c --blob: bitwire.gen.blob is not installed", 0) end
      write(dir .. "/" .. name .. "_blob.h", blob.generate(s, opts))
      return 0
    end
    local out = bitwire.gen.c(s, opts)
    write(dir .. "/" .. name .. ".h", out.header)
    write(dir .. "/" .. name .. ".c", out.source)
  else
    write(dir .. "/" .. name .. ".hpp", bitwire.gen.serialize_h(s, opts))
  end
  return 0
end

return M
