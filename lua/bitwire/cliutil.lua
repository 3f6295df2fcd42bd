-- Helpers the `bitwire` subcommands share: arguments, definitions files,
-- packets and frame options, and how values print.
local M = {}

local FAIL = {}   -- metatable of a user-facing error

-- Stop the command with 'msg' for the user (exit status 1).
function M.fail(fmt, ...)
  error(setmetatable({ msg = string.format(fmt, ...) }, FAIL), 0)
end

function M.message(e)
  if getmetatable(e) == FAIL then return e.msg end
  return tostring(e)
end

-- User errors pass as they are: M.fail's, and messages raised without a
-- position (error(msg, 0), as subcommands of other modules do). An error
-- with a source position is a bug: keep its traceback.
function M.traceback(e)
  if getmetatable(e) == FAIL then return e end
  if type(e) == "table" and type(e.msg) == "string" then return setmetatable(e, FAIL) end
  if type(e) == "string" and not e:match("^[^\n]-%.lua:%d+: ") and not e:match("^%[") then
    return setmetatable({ msg = e }, FAIL)
  end
  return debug.traceback(tostring(e), 2)
end

-- The numeric options of every subcommand and their ranges: one rule for
-- all of them, so none wraps past 64 bits or takes a sign or junk. A max
-- of -1 is 2^64 - 1 (a protocol id is a uint64).
local limits = require("bitwire.core").limits
M.NUMBERS = {
  protocol = { 0, -1 },
  ["version-bits"] = { 1, limits.version_bits },
  version = { 0, limits.version },
  ["baseline-id"] = { 0, 65535 },
  ["udp-port"] = { 1, 65535 },
}

local U64MAX = "18446744073709551615"

-- The unsigned integer 'text' names (decimal or 0x hex), or nil when it
-- is not one or does not fit 64 bits. Digits are compared before they are
-- added up: Lua wraps hex literals past 64 bits and rounds decimal ones.
local function parseuint(text)
  local hex = text:match("^0[xX](%x+)$")
  local digits = hex or text:match("^%d+$")
  if digits == nil then return nil end
  digits = digits:match("^0*(.*)$")
  if #digits > (hex and 16 or #U64MAX)
      or not hex and #digits == #U64MAX and digits > U64MAX then
    return nil
  end
  local n, base = 0, hex and 16 or 10
  for c in digits:gmatch(".") do n = n * base + tonumber(c, 16) end  -- wraps as a uint64
  return n
end

-- The value of numeric option 'name' (M.NUMBERS) given as 'text', or a
-- one-line error naming the option and its range.
function M.number(name, text)
  local r = M.NUMBERS[name]
  local n = parseuint(text)
  if n == nil or math.ult(n, r[1]) or math.ult(r[2], n) then
    M.fail("option --%s takes an integer in %d..%s (decimal or 0x hex), not '%s'",
      name, r[1], r[2] == -1 and U64MAX or tostring(r[2]), text)
  end
  return n
end

-- Option 'name' as it is typed: -o is the one short option.
function M.optname(name)
  return name == "o" and "-o" or "--" .. name
end

-- Split 'args' by 'spec' = {flags = {name = true}, options = {name = true}}:
-- returns the positional arguments and a table of the options given, the
-- numeric ones (M.NUMBERS) as integers. None is repeatable: one given
-- twice is refused, not silently the last. "--" ends the options: what
-- follows is positional, so a file named -x.bin can be given.
function M.parse(args, spec, usage)
  local pos, opts, i = {}, {}, 1
  while i <= #args do
    local a = args[i]
    -- long names have two letters or more: --o is no spelling of -o
    local name, val = a:match("^%-%-([%w][%w-]+)=(.*)$")
    name = name or a:match("^%-%-([%w][%w-]+)$") or (a == "-o" and "o")
    if a == "--" then
      table.move(args, i + 1, #args, #pos + 1, pos)
      break
    elseif name then
      if opts[name] ~= nil then M.fail("option %s given twice", M.optname(name)) end
      if spec.flags and spec.flags[name] then
        if val ~= nil then M.fail("option --%s takes no value", name) end
        opts[name] = true
      elseif spec.options and spec.options[name] then
        if val == nil then
          i = i + 1
          val = args[i]
          if val == nil then M.fail("option %s needs a value\n%s", M.optname(name), usage) end
        end
        opts[name] = M.NUMBERS[name] and M.number(name, val) or val
      else
        M.fail("unknown option %s\n%s", a, usage)
      end
    elseif a:match("^%-%a") or a:match("^%-%-.") then   -- -x, --o: no subcommand's
      M.fail("unknown option %s\n%s", a, usage)
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  return pos, opts
end

-- Positional argument 'i' or a usage error.
function M.need(pos, i, what, usage)
  if pos[i] == nil then M.fail("missing %s\n%s", what, usage) end
  return pos[i]
end

-- No positional argument past the 'n'-th: one the command would not read
-- is refused (as an option given twice is), never silently dropped.
function M.nomore(pos, n, usage)
  if pos[n + 1] ~= nil then M.fail("unexpected argument '%s'\n%s", pos[n + 1], usage) end
end

-- An argument naming a file: '' names none (the system's error for it
-- would begin ": No such file", naming nothing).
local function filename(path)
  if path == "" then M.fail("an empty argument where a file name goes") end
  return path
end

-- A definitions file, loaded in bitwire's sandbox. It is a path, never -:
-- bitwire.load reads only a regular file, its size checked first.
function M.loadschema(path)
  if path == "-" then
    M.fail("a definitions file must be a file's path, not - (standard input)")
  end
  local bitwire = require "bitwire"
  local s, err = bitwire.load(filename(path))
  if s == nil then M.fail("%s", err) end
  return s
end

-- The type 'name' of schema 's' from file 'path', or a helpful error.
function M.checktype(s, name, path)
  local p = s:program()
  if p.byname[name] == nil then
    local names = {}
    for _, t in ipairs(p.types) do names[#names + 1] = t.name end
    M.fail("%s: no type '%s' (types: %s)", path, name, table.concat(names, ", "))
  end
  return p.byname[name]
end

-- The most bytes an input may hold: a packet as large as encode makes
-- (framing adds a few bytes), a blob as large as its offsets reach, and
-- JSON of a few times a packet.
M.LIMITS = { packet = limits.packet + 64, blob = limits.blob,
             json = 4 * limits.packet }

-- The bytes of file 'path' (- is stdin), at most 'limit' (default: JSON's)
-- or stop. io.open opens a directory, and then read returns nil and the
-- error: that is the user's too.
function M.readfile(path, stdin, limit)
  local f = stdin or io.stdin
  if path ~= "-" then
    local err
    f, err = io.open(filename(path), "rb")
    if f == nil then M.fail("%s", err) end
  end
  -- a piece at a time: a device or a pipe that never ends (/dev/zero) stops
  -- at the limit, not when memory runs out
  local parts, n, rerr = {}, 0
  limit = limit or M.LIMITS.json
  repeat
    local piece
    piece, rerr = f:read(1 << 16)  -- nil and no error at the end
    if piece then
      parts[#parts + 1] = piece
      n = n + #piece
    end
  until piece == nil or n > limit
  if path ~= "-" then f:close() end
  if n > limit then M.fail("%s: more than %d bytes, the most this input may hold", path, limit) end
  if rerr then M.fail("%s: %s", path, rerr) end
  return table.concat(parts)
end

-- Write 'data' to the open file 'f' (of 'path') and close it: true, or
-- nil and why. A buffered write fails only at close (a full disk): both
-- are checked.
function M.writeclose(f, data, path)
  local ok, werr = f:write(data)
  local closed, cerr = f:close()
  if ok and closed then return true end
  return nil, path .. ": " .. tostring(werr or cerr)
end

-- Write 'data' to file 'path' (- is 'stdout', as it is stdin to readfile).
-- A regular file (or none yet) is written whole to a temporary file beside
-- it, then renamed over it: a write that fails (a full disk) leaves the
-- old file as it was, so '-o save.bin' over its own input loses nothing.
-- A device, FIFO or link is written in place, as before; so is a file
-- whose directory takes no new file.
function M.writefile(path, data, stdout)
  if path == "-" then
    (stdout or io.stdout):write(data)
    return
  end
  local name = filename(path)
  if require("bitwire.core").replaceable(name) then
    local tmp = name .. ".bitwire-tmp"
    local f = io.open(tmp, "wb")
    if f ~= nil then
      local ok, why = M.writeclose(f, data, path)
      if ok then ok, why = os.rename(tmp, name) end
      if ok then return end
      os.remove(tmp)
      M.fail("%s", why:find(path, 1, true) == 1 and why or path .. ": " .. why)
    end
  end
  local f, err = io.open(name, "wb")
  if f == nil then M.fail("%s", err) end
  local ok, why = M.writeclose(f, data, path)
  if not ok then M.fail("%s", why) end
end

function M.fromhex(h, what)
  h = h:gsub("%s", "")
  if #h % 2 ~= 0 or h:find("%X") then M.fail("%s: not a hex string", what) end
  return (h:gsub("%x%x", function (x) return string.char(tonumber(x, 16)) end))
end

function M.tohex(s)
  return (s:gsub(".", function (c) return string.format("%02x", c:byte()) end))
end

-- Argument 'src' as messages name it: an inline value (json:, hex:) in
-- one line of at most 64 columns, "..." marking a cut, so an error stays
-- one short line; a file's name as given.
function M.label(src)
  if not (src:match("^json:") or src:match("^hex:")) then return src end
  local one = src:gsub("%s+", " ")
  if M.width(one) <= 64 then return one end
  return M.cut(one, 61) .. "..."
end

-- A JSON argument's text: json:{...} inline, - (stdin) or a file name.
function M.readjson(arg, stdin)
  return arg:match("^json:(.*)$") or M.readfile(arg, stdin, M.LIMITS.json)
end

-- The value of type 'name' that JSON argument 'src' (json:, - or a file)
-- gives, read by bitwire.json; or stop, naming 'src'.
function M.jsonvalue(s, name, src, stdin)
  local v, err = require("bitwire.json").decode(s, name, M.readjson(src, stdin))
  if v == nil then M.fail("%s: %s", M.label(src), err) end
  return v
end

-- Stop with the library's error 'err' about the value of type 'name' that
-- argument 'src' gave: encode, cost and blob word the same bad value alike.
function M.valuefail(src, name, err)
  M.fail("%s: %s: %s", M.label(src), name, tostring(err))
end

-- A packet argument: hex:0a1b..., - (stdin) or a file name.
function M.readpacket(arg, stdin)
  local h = arg:match("^hex:(.*)$")
  if h then return M.fromhex(h, M.label(arg)) end
  return M.readfile(arg, stdin, M.LIMITS.packet)
end

-- Options naming a framed packet's protocol, for parse's spec and usage.
M.FRAME_FLAGS = { deltas = true, ["no-check"] = true, ["no-fingerprint"] = true,
                  tag = true }
M.FRAME_OPTIONS = { protocol = true, ["version-bits"] = true }
M.FRAME_USAGE = [[
framing (bitwire.protocol packets):
  --protocol ID       the protocol id (decimal or 0x hex); the packet is framed
  --no-check          frames without the end check (check = false)
  --no-fingerprint    the id is used as it is (fingerprint = false)
  --deltas            frames carry the delta bit (deltas = true)
  --version-bits N    frames carry the version in N bits (version_bits = N)
  --tag               a registry's frames (bitwire.protocol(bitwire.watch(defs))):
                      the 32-bit schema tag, the id not folded
]]

-- The frame settings of the options, or nil for an unframed packet:
-- {protocol, id, wire_id, endcheck, tag, version_bits, deltas, opts}; opts
-- are what encode and decode add for protocols that do not carry the
-- version themselves (with 'reading', for decode and dissect: --version,
-- the version the message is read at). --tag frames are a registry's
-- (bitwire.watch(path)).
function M.frame(s, opts, path, reading)
  if opts.protocol == nil then
    for k in pairs(M.FRAME_FLAGS) do
      if opts[k] then M.fail("--%s needs --protocol", k) end
    end
    if opts["version-bits"] then M.fail("--version-bits needs --protocol") end
    return nil
  end
  local bitwire = require "bitwire"
  local id = opts.protocol
  local vb = opts["version-bits"] or 0
  local po = { id = id, check = not opts["no-check"], versioned = vb ~= 0 or nil,
               version_bits = vb ~= 0 and vb or nil }
  -- bitwire.protocol checks the options (its errors are the user's here)
  local function protocol(target)
    local ok, p = pcall(bitwire.protocol, target, po)
    if not ok then M.fail("%s", (tostring(p):gsub("^[^\n]-%.lua:%d+: ", ""))) end
    return p
  end
  local p
  local fo = {}
  if opts.tag then
    local reg, err = bitwire.watch(path)
    if reg == nil then M.fail("%s", err) end
    po.deltas = opts.deltas or nil
    p = protocol(reg)
  else
    po.fingerprint = not opts["no-fingerprint"]
    po.deltas = opts.deltas or nil
    p = protocol(s)
    -- a protocol that does not carry the version itself: the frame options do
    if vb > 0 and p.version_bits ~= vb then fo.version_bits = vb end
  end
  -- reading: --version is the version to read the message at, which a
  -- frame with version bits gives itself
  if reading and opts.version ~= nil then
    if p.version_bits > 0 then
      M.fail("--version: these frames carry their version (--version-bits), "
        .. "the packet's is read")
    end
    fo.version = opts.version
  end
  return { protocol = p, id = id, wire_id = require("bitwire.dissect").wire_id(p),
           endcheck = p.endcheck, tag = opts.tag or false, version_bits = vb,
           deltas = opts.deltas or false, opts = fo }
end

-- The positional arguments after defs.lua of a framed packet: the packet,
-- or a type and the packet (the type the packet must hold, checked with
-- M.holds). Returns the type (or nil) and the packet argument.
function M.framedargs(s, pos, path, usage)
  local src = M.need(pos, 2, "packet", usage)
  M.nomore(pos, 3, usage)
  if pos[3] == nil then return nil, src end
  M.checktype(s, pos[2], path)
  return pos[2], pos[3]
end

-- Why a frame holding message 'got' is not the 'want' its command line
-- named, or nil when it is (or none was named).
function M.holds(got, want)
  if want ~= nil and got ~= want then
    return "packet holds " .. got .. ", not " .. want
  end
end

-- --baseline (JSON: a file, - or json:...) as a function (type name) ->
-- value, or nil without the option. A delta is read and written against it.
-- 'src' is the command's other input (its 'what'): call this before
-- reading it, so a - for both is refused before stdin is read at all.
function M.baseline(s, opts, stdin, src, what)
  -- the id names the baseline of a delta frame: anywhere else it does nothing
  if opts["baseline-id"] and not (opts.protocol and opts.deltas and opts.baseline) then
    M.fail("--baseline-id names a delta frame's baseline: it needs --protocol, "
      .. "--deltas and --baseline")
  end
  if opts.baseline == nil then return nil end
  -- a frame without deltas carries no delta to read against it
  if opts.protocol ~= nil and not opts.deltas then M.fail("--baseline in a frame needs --deltas") end
  if opts.baseline == "-" and src == "-" then
    M.fail("--baseline - and the %s - would both read standard input: give one as a file",
      what)
  end
  local text = M.readjson(opts.baseline, stdin)
  return function (name)
    local b, msg = require("bitwire.json").decode(s, name, text)
    if b == nil then M.fail("--baseline: %s", msg) end
    return b
  end
end

-- --baseline-id: the id a delta frame names its baseline by (default 0).
function M.baseline_id(opts)
  return opts["baseline-id"] or 0
end

-- Code points a terminal gives two columns (East Asian Wide and
-- Fullwidth, emoji) or none (combining marks, zero-width spaces), as
-- {first, last, columns}; any other takes one.
local COLUMNS = {
  { 0x0300, 0x036F, 0 }, { 0x1100, 0x115F, 2 }, { 0x1AB0, 0x1AFF, 0 },
  { 0x1DC0, 0x1DFF, 0 }, { 0x200B, 0x200F, 0 }, { 0x20D0, 0x20FF, 0 },
  { 0x2E80, 0x303E, 2 }, { 0x3041, 0x33FF, 2 }, { 0x3400, 0x4DBF, 2 },
  { 0x4E00, 0x9FFF, 2 }, { 0xA000, 0xA4CF, 2 }, { 0xAC00, 0xD7A3, 2 },
  { 0xF900, 0xFAFF, 2 }, { 0xFE20, 0xFE2F, 0 }, { 0xFE30, 0xFE4F, 2 },
  { 0xFEFF, 0xFEFF, 0 }, { 0xFF00, 0xFF60, 2 }, { 0xFFE0, 0xFFE6, 2 },
  { 0x1F300, 0x1F64F, 2 }, { 0x1F900, 0x1F9FF, 2 }, { 0x20000, 0x3FFFD, 2 },
}

local function columns (cp)
  if cp < 0x0300 then return 1 end
  for _, r in ipairs(COLUMNS) do
    if cp < r[1] then return 1 end
    if cp <= r[2] then return r[3] end
  end
  return 1
end

-- The columns 's' takes: a field's name is UTF-8 (the compiler refuses
-- any other), so each character takes its columns; other text a byte each.
function M.width(s)
  if not utf8.len(s) then return #s end
  local w = 0
  for _, cp in utf8.codes(s) do w = w + columns(cp) end
  return w
end

-- The first 'n' columns of 's' at most: whole characters, never part of
-- one (a wide one that would pass 'n' is left out).
function M.cut(s, n)
  if not utf8.len(s) then return s:sub(1, n) end
  local w = 0
  for at, cp in utf8.codes(s) do
    w = w + columns(cp)
    if w > n then return s:sub(1, at - 1) end
  end
  return s
end

-- 's' padded with spaces to 'w' columns: string.format caps a width at
-- 99 ("%-105s" is an error), a path can be longer, and it counts bytes.
function M.pad(s, w)
  return s .. string.rep(" ", w - M.width(s))
end

-- A string as a Lua literal in one line that no terminal acts on
-- (walk.quote, which the plugin shares); bytes that are no UTF-8 (0x9b is
-- CSI itself), as a bytes default may hold, each in decimal.
function M.quote(s)
  if utf8.len(s) == nil then
    local q = string.format("%q", s):gsub("\\\n", "\\n")
    return (q:gsub("[\128-\255]", function (c) return "\\" .. c:byte() end))
  end
  return require("bitwire.walk").quote(s)
end

-- A value as one line of text.
function M.show(v, kind)
  local t = type(v)
  if t == "string" then
    if kind == "bytes" then return "0x" .. M.tohex(v) end
    return M.quote(v)
  elseif t == "number" then
    local json = require "bitwire.json"
    -- float64s in the digits that read back as the same double
    if math.type(v) == "float" then
      return kind == "float64" and json.float(v) or string.format("%.9g", v)
    end
    -- a 64-bit uint past 2^63 is a negative Lua integer
    if kind == "uint" then return json.unsigned(v) end
    return tostring(v)
  elseif t == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = M.show(v[i]) end
    return "(" .. table.concat(parts, ", ") .. ")"
  end
  return tostring(v)
end

-- The 'n' (<= 64) bits of 'bytes' from bit 'bit', as an integer.
function M.rawbits(bytes, bit, n)
  local v = 0
  for i = n - 1, 0, -1 do
    local b = bit + i
    local byte = bytes:byte(b // 8 + 1) or 0
    v = (v << 1) | ((byte >> (b % 8)) & 1)
  end
  return v
end

return M
