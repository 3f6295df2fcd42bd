-- bitwire blob: JSON to blob and back, and upgrading old blobs.
-- A subcommand module of the `bitwire` dispatcher (bitwire/cli.lua):
-- {summary =, usage =, run = function (args, io) -> exit status}.
local M = {}

M.summary = "build memory-mappable blobs from JSON, print them, upgrade them"
M.usage = [=[
usage: bitwire blob defs.lua Type in.json -o out.bin [--version N]
       bitwire blob defs.lua Type in.bin --json [-o out.json]
       bitwire blob upgrade defs.lua Type in.bin -o out.bin
       bitwire blob header defs.lua [-o out.h] [--prefix P] [--version N]

The first form is the build step: it reads a JSON value of Type (enums by
name, null or an absent key for an absent optional, sparse arrays as
objects keyed by slot number) and writes s:blob(Type, value), at version N
if given. --json reads a blob back (s:unblob) and prints it as JSON.
upgrade reads a blob written at any older version of the description and
writes it again at the current one: new fields get their defaults, removed
fields are dropped. header prints bitwire.gen.blob's C header: structs,
accessors and T_blob_check for every type, for blobs of version N if
given. An input file of - is stdin (defs.lua is always a path), in.json
may be json:{...} inline, and -o - is stdout. A form refuses the options
it does not take. The blob layout is in WIRE.md, "Blobs".
]=]

local util = require "bitwire.cliutil"
local fail = util.fail

local readfile, writefile = util.readfile, util.writefile

local function parse(args)
  return util.parse(args, { flags = { json = true },
    options = { o = true, version = true, prefix = true } }, M.usage)
end

local function load(path, name)
  local s = util.loadschema(path)
  util.checktype(s, name, path)
  return s
end

local function tojson(s, name, value)
  return require("bitwire.json").encode(s, name, value)
end

local function unblob(s, name, path, stdin)
  local v, err = s:unblob(name, readfile(path, stdin, util.LIMITS.blob))
  if v == nil then fail("%s: %s", path, err) end
  return v
end

-- Refuse the options of 'opts' that form 'form' does not take (a
-- version or prefix silently dropped would write another blob or header).
local function only(opts, form, ...)
  local takes = {}
  for _, k in ipairs { ... } do takes[k] = true end
  for _, k in ipairs { "json", "o", "prefix", "version" } do
    if opts[k] ~= nil and not takes[k] then
      fail("%s does not take %s\n%s", form, util.optname(k), M.usage)
    end
  end
end

function M.run(args, sysio)
  local out = sysio and sysio.stdout or io.stdout
  local stdin = sysio and sysio.stdin or io.stdin
  local pos, opts = parse(args)
  if pos[1] == "header" then
    only(opts, "blob header", "o", "prefix", "version")
    util.need(pos, 2, "definitions file", M.usage)
    util.nomore(pos, 2, M.usage)
    local s = util.loadschema(pos[2])
    local ok, text = pcall(require("bitwire.gen.blob"), s,
      { prefix = opts.prefix, version = opts.version })
    if not ok then fail("%s: %s", pos[2], (tostring(text):gsub("^[^\n]-%.lua:%d+: ", ""))) end
    if opts.o then writefile(opts.o, text, out) else out:write(text) end
    return 0
  end
  if pos[1] == "upgrade" then
    only(opts, "blob upgrade", "o")
    util.need(pos, 2, "definitions file", M.usage)
    util.need(pos, 3, "type name", M.usage)
    util.need(pos, 4, "blob (in.bin)", M.usage)
    util.nomore(pos, 4, M.usage)
    if not opts.o then fail("missing -o out.bin\n%s", M.usage) end
    local s = load(pos[2], pos[3])
    -- a field the old blob lacks and no default fills is the blob's fault
    local ok, blob = pcall(s.blob, s, pos[3], unblob(s, pos[3], pos[4], stdin))
    if not ok then util.valuefail(pos[4], pos[3], blob) end
    writefile(opts.o, blob, out)
    return 0
  end
  util.need(pos, 1, "definitions file (or header, upgrade)", M.usage)
  util.need(pos, 2, "type name", M.usage)
  util.need(pos, 3, "input (in.json, or in.bin with --json)", M.usage)
  util.nomore(pos, 3, M.usage)
  local s, name = load(pos[1], pos[2]), pos[2]
  if opts.json then
    only(opts, "blob --json", "json", "o")
    local text = tojson(s, name, unblob(s, name, pos[3], stdin))
    if opts.o then writefile(opts.o, text .. "\n", out) else out:write(text, "\n") end
    return 0
  end
  only(opts, "blob (JSON to blob)", "o", "version")
  if not opts.o then fail("missing -o out.bin\n%s", M.usage) end
  local value = util.jsonvalue(s, name, pos[3], stdin)
  local ok, blob = pcall(s.blob, s, name, value, opts.version and { version = opts.version } or nil)
  if not ok then util.valuefail(pos[3], name, blob) end
  writefile(opts.o, blob, out)
  return 0
end

return M
