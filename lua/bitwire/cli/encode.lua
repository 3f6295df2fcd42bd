-- bitwire encode defs.lua Type value.json: JSON in, packet out.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "encode a JSON value into a packet"
M.usage = [=[
usage: bitwire encode defs.lua Type value.json [-o packet.bin] [--version N]
                      [--baseline base.json [--baseline-id N]]
                      [--protocol ID [framing options]]

value.json: a file, - (stdin) or json:{...}. Writes the packet to -o (-:
stdout, the raw bytes), or prints it as hex. With --protocol the packet is framed, as
bitwire.protocol(schema, {id = ID, ...}):encode(Type, value) frames it.
With --baseline the packet is a delta against that value (JSON too); a
delta frame (--deltas) names it by --baseline-id (0..65535, default 0).

The JSON mapping (bitwire.json.encode / decode in Lua):
  record        object; an absent optional field is an absent key (null
                reads as absent)
  array, quat   array ([x, y, z, w] for a quat)
  sparse        object keyed by slot number: {"3": {...}, "17": {...}}
  enum          its name, as a string
  int, uint     number; past 2^53 in magnitude a string of digits
                ("18446744073709551615" is read back exactly, as are
                integer numbers; one past 64 bits is refused, and so
                is a negative one for a uint)
  float         number; "nan", "inf", "-inf" for those values
  string        string;  bytes: base64
]=] .. util.FRAME_USAGE

function M.run(args, io)
  local flags, options = {}, { o = true, version = true, baseline = true,
                                ["baseline-id"] = true }
  for k in pairs(util.FRAME_FLAGS) do flags[k] = true end
  for k in pairs(util.FRAME_OPTIONS) do options[k] = true end
  local pos, opts = util.parse(args, { flags = flags, options = options }, M.usage)
  local path = util.need(pos, 1, "definitions file", M.usage)
  local name = util.need(pos, 2, "type name", M.usage)
  local src = util.need(pos, 3, "value (JSON file, - or json:...)", M.usage)
  util.nomore(pos, 3, M.usage)
  local s = util.loadschema(path)
  util.checktype(s, name, path)
  local frame = util.frame(s, opts, path)
  local baseline = util.baseline(s, opts, io.stdin, src, "value")
  local value = util.jsonvalue(s, name, src, io.stdin)
  local eopts = { version = opts.version,
                  baseline = baseline and baseline(name) }
  local ok, packet
  if frame then
    for k, v in pairs(frame.opts) do eopts[k] = v end
    eopts.baseline_id = eopts.baseline and util.baseline_id(opts) or nil
    ok, packet = pcall(frame.protocol.encode, frame.protocol, name, value, eopts)
  else
    ok, packet = pcall(s.encode, s, name, value, eopts)
  end
  if not ok then util.valuefail(src, name, packet) end
  if opts.o then util.writefile(opts.o, packet, io.stdout)
  else io.stdout:write(util.tohex(packet), "\n") end
  return 0
end

return M
