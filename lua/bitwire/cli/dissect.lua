-- bitwire dissect defs.lua [Type] packet: every field with its bits.
local util = require "bitwire.cliutil"

local M = {}
local PATHS = require("bitwire.core").frame_paths

M.summary = "every field of a packet: bit offset, width, raw bits, value"
M.usage = [=[
usage: bitwire dissect defs.lua Type packet [--version N] [--baseline value.json]
       bitwire dissect defs.lua [Type] packet --protocol ID [framing options]
                       [--version N] [--baseline value.json [--baseline-id N]]

packet: a file, - (stdin) or hex:0a1b2c...
Prints an indented tree, one line per field: its first bit, its width in
bits, the raw bits (hex, up to 64 bits) and the decoded value. Lines
ending in ? are presence bits, # counts, @ sparse slot indices, ~ a sparse
encoding, ^ a delta's changed bits. A framed packet shows its header: the
CRC (flagged when it does not match), tag, version, delta bit and baseline
id, message type (a Type given must be the packet's), and the end check. A
bad packet shows every field up to the failure, then the error with its
code, and exits with status 1.
A delta (a packet encoded with {baseline = b}, or a delta frame) is read
against --baseline (JSON, a file, - or json:...). A delta frame without it
is read assuming the baseline holds every record the delta changes (true
unless an optional record was absent there); it stops at a changed array or
sparse slot, whose delta needs the baseline to be read. With --baseline-id,
a delta frame naming another baseline is refused, as decode refuses it.
]=] .. util.FRAME_USAGE

local function line(out, bytes, e)
  local raw = ""
  if not e.open and e.kind ~= "struct" and e.kind ~= "array" and e.kind ~= "sparse"
      and e.bits > 0 and e.bits <= 64 then
    raw = string.format("%x", util.rawbits(bytes, e.bit, e.bits))
  end
  local value
  if e.incomplete then
    value = "(incomplete)"
  elseif e.kind == "struct" or e.kind == "array" or e.kind == "sparse" then
    value = e.role == "delta" and "(delta)" or ""
    if e.kind ~= "struct" and type(e.value) == "table" then
      local n = 0
      for _ in pairs(e.value) do n = n + 1 end
      value = string.format("(%d %s)", n, e.kind == "array" and "elements" or "slots")
    end
  -- a header entry by its role: a message may have a field named frame.crc
  elseif e.role == "header" and e.path == PATHS.crc then
    value = string.format("0x%08x %s", e.value, e.bad and "BAD" or "ok")
  elseif e.kind == "check" then
    value = e.bad and string.format("0x%08x BAD", e.value) or "ok"
  elseif e.role == "header" and e.path == PATHS.tag then
    value = string.format("0x%08x", e.value)
  elseif e.kind == "uint" and e.role == "header" then
    value = tostring(e.value)
  else
    value = util.show(e.value, e.kind)
  end
  local label = string.rep("  ", e.depth) .. e.path
  out:write(string.format("%6d %5d  %-16s %s%s%s\n", e.bit, e.bits, raw, label,
    value ~= "" and " = " or "", value))
end

function M.run(args, io)
  local flags, options = {}, { version = true, baseline = true, ["baseline-id"] = true }
  for k in pairs(util.FRAME_FLAGS) do flags[k] = true end
  for k in pairs(util.FRAME_OPTIONS) do options[k] = true end
  local pos, opts = util.parse(args, { flags = flags, options = options }, M.usage)
  local path = util.need(pos, 1, "definitions file", M.usage)
  util.nomore(pos, 3, M.usage)
  local s = util.loadschema(path)
  local frame = util.frame(s, opts, path, true)
  local name, src
  if frame then
    name, src = util.framedargs(s, pos, path, M.usage)
  else
    name = util.need(pos, 2, "type name (or --protocol for a framed packet)", M.usage)
    src = util.need(pos, 3, "packet", M.usage)
    util.checktype(s, name, path)
  end
  local baseline = util.baseline(s, opts, io.stdin, src, "packet")
  local bytes = util.readpacket(src, io.stdin)
  local dissect = require "bitwire.dissect"
  local out = io.stdout
  out:write(string.format("%s: %d bytes%s\n", util.label(src), #bytes,
    frame and string.format(", protocol 0x%x", frame.id) or ", " .. name))
  out:write(string.format("%6s %5s  %-16s %s\n", "bit", "bits", "raw", "field = value"))
  local list, err, h
  if frame then
    local v
    frame.baseline = baseline
    frame.baseline_id = opts["baseline-id"]
    frame.version = frame.opts.version
    list, h, v, err = dissect.frame(s, bytes, frame)
    local other = err == nil and util.holds(h.name, name)
    if other then err = { path = PATHS.type, message = other, code = "tag", bit = 0 } end
    if v == nil and err == nil then err = { path = "", message = "?", code = "?", bit = 0 } end
  else
    local version = opts.version
    local msg, code
    list, msg, code = dissect.dissect(s, name, bytes, { version = version,
      baseline = baseline and baseline(name) })
    if msg then err = { text = msg, code = code } end
  end
  for _, e in ipairs(list) do line(out, bytes, e) end
  if err then
    local tname = name or (h and h.name)
    io.stderr:write(string.format("error: %s: %s%s [%s]\n", util.label(src),
      tname and err.code ~= "crc" and tname .. ": " or "",
      err.text or dissect.errtext(err), err.code))
    return 1
  end
  local last = list[#list]
  local used = last and last.bit + last.bits or 0
  for _, e in ipairs(list) do used = math.max(used, e.bit + e.bits) end
  out:write(string.format("ok: %d bits read of %d\n", used, 8 * #bytes))
  return 0
end

return M
