-- bitwire decode defs.lua [Type] packet: packet in, JSON out.
local util = require "bitwire.cliutil"

local M = {}

M.summary = "decode a packet into JSON"
M.usage = [=[
usage: bitwire decode defs.lua Type packet [--version N] [--baseline base.json]
       bitwire decode defs.lua [Type] packet --protocol ID [framing options]
                      [--version N] [--baseline base.json [--baseline-id N]]

packet: a file, - (stdin) or hex:0a1b2c... Prints the value as one line of
JSON (the mapping is in `bitwire encode --help`); a framed packet prints
{"type": "<message type>", "value": {...}}; a Type given with it is the
message type the packet must hold. A bad packet prints the error
(path, bit and code) and exits with status 1. A delta is decoded against
--baseline (JSON: a file, - or json:...); in a delta frame it stands for
the baseline id --baseline-id (default 0).
]=] .. util.FRAME_USAGE

function M.run(args, io)
  local flags, options = {}, { version = true, baseline = true, ["baseline-id"] = true }
  for k in pairs(util.FRAME_FLAGS) do flags[k] = true end
  for k in pairs(util.FRAME_OPTIONS) do options[k] = true end
  local pos, opts = util.parse(args, { flags = flags, options = options }, M.usage)
  local path = util.need(pos, 1, "definitions file", M.usage)
  local s = util.loadschema(path)
  local frame = util.frame(s, opts, path, true)
  local json = require "bitwire.json"
  if frame then
    local want, src = util.framedargs(s, pos, path, M.usage)
    local baseline = util.baseline(s, opts, io.stdin, src, "packet")
    local bytes = util.readpacket(src, io.stdin)
    local dopts = {}
    for k, v in pairs(frame.opts) do dopts[k] = v end
    if baseline then
      -- the baseline's type is the message's: read it from the header
      local r = require("bitwire.core").frame_open(bytes, frame.wire_id, frame.endcheck)
      local h = r and require("bitwire.walk").header(s:program(),
        require("bitwire.dissect").reader(r), frame)
      if h then dopts.baselines = { [util.baseline_id(opts)] = baseline(h.name) } end
    end
    local name, value, code = frame.protocol:decode(bytes, dopts)
    if name == nil then util.fail("%s: %s [%s]", util.label(src), value, code) end
    local other = util.holds(name, want)
    if other then util.fail("%s: frame.type: %s [tag]", util.label(src), other) end
    io.stdout:write('{"type":"', name, '","value":', json.encode(s, name, value), "}\n")
    return 0
  end
  local name = util.need(pos, 2, "type name (or --protocol for a framed packet)", M.usage)
  local src = util.need(pos, 3, "packet", M.usage)
  util.nomore(pos, 3, M.usage)
  util.checktype(s, name, path)
  local baseline = util.baseline(s, opts, io.stdin, src, "packet")
  local bytes = util.readpacket(src, io.stdin)
  local value, msg, code = s:decode(name, bytes, {
    version = opts.version,
    baseline = baseline and baseline(name) })
  if value == nil then util.fail("%s: %s: %s [%s]", util.label(src), name, msg, code) end
  io.stdout:write(json.encode(s, name, value), "\n")
  return 0
end

return M
