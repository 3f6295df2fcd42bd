-- Walks a compiled program (s:program()) over a packet, field by field,
-- reporting each field's bit offset, width and value: the one reading of
-- the wire that dissect, cost and the Wireshark dissector share. It mirrors
-- the C driver's decode (bindings/lbw_schema.c) and is checked against it
-- by spec/10-walk_spec.lua.
--
-- Written in the subset of Lua that runs on 5.2 too (no integer division,
-- no bit operators, no string.pack): the generated Wireshark plugin embeds
-- this file as it is. Reading is the reader's job: 'r' has
--   r:pos() -> bit offset          r:remaining() -> bits left
--   r:bits(n) -> v | nil, msg, code (n <= 32 here)
--   r:leaf(f) -> value of a scalar field f | nil, msg, code
--   r:int_relative(prev) -> v | nil, msg, code  (unsigned: up to 2^32 - 1)
--   r:f32(x) -> x rounded to float32
local M = {}

-- bits_required(0, n) for n >= 0 small enough to count exactly
local function bitsfor(n)
  local b = 0
  while n >= 1 do
    n = (n - n % 2) / 2
    b = b + 1
  end
  return b
end
M.bitsfor = bitsfor

-- The number codes (bitwire/walkcodes.lua), the core's words for a
-- failure (bitwire.core's formats, by name, and messages, by code) and the
-- paths of a frame's parts (its frame_paths, by key): required, or handed
-- in by the Wireshark plugin, which embeds them all and has no require.
local codes, formats, messages, paths = ...
if type(codes) ~= "table" then codes = require "bitwire.walkcodes" end
if type(formats) ~= "table" then
  local core = require "bitwire.core"
  formats, messages, paths = core.formats, core.messages, core.frame_paths
end
local pow2 = codes.pow2

-- Decode's words for failure 'key' (bitwire.core.formats) with numbers
-- 'a', 'b', 'c' written as the core writes them (a reader passes one past
-- 2^53 as its text).
local function say(key, a, b, c)
  local t = {}
  for i, v in ipairs { a or "", b or "", c or "" } do
    if type(v) ~= "number" then t[i] = tostring(v)
    elseif v >= -2 ^ 63 and v < 2 ^ 63 then t[i] = string.format("%d", v)
    else t[i] = string.format("%.0f", v) end   -- a reader's float, inexact
  end
  return string.format(formats[key], t[1], t[2], t[3])
end
M.say = say

-- s:decode's default max_values (bitwire.MAX_VALUES): the plugin has no
-- bitwire to ask, and a hostile packet must not make millions of entries
M.MAX_VALUES = 1048576

-- A packet's text as a Lua literal in one line that no terminal acts on:
-- %q escapes C0 and DEL but writes a newline as a backslash and a newline
-- (a string could forge the lines after it), and passes C1 (U+0080 to
-- U+009F; some terminals take U+009B as CSI) as it is. For the tools and
-- the plugin alike.
function M.quote(s)
  local q = string.format("%q", s):gsub("\\\n", "\\n")
  return (q:gsub("\194([\128-\159])", function (c)
    return string.format("\\u{%x}", c:byte())
  end))
end

-- A marker for "the baseline is not known here" (dissecting a delta frame
-- without the value it was made against).
M.UNKNOWN = setmetatable({}, { __tostring = function () return "baseline" end })

local Walk = {}
Walk.__index = Walk

local function join(path, name)
  if path == "" then return name end
  return path .. "." .. name
end

-- A reader's message as an error's: without the reader method's name
-- ("int: ") and the bit, which the error holds apart; and that bit.
local function reason(msg)
  local at = tostring(msg):match(" %(bit (%d+)%)$")
  msg = tostring(msg):gsub(" %(bit %d+%)$", ""):gsub("^[%w_]+: ", "")
  return msg, at and tonumber(at)
end

-- Stop the walk: the error names the path, the reason and the bit.
function Walk:fail(path, msg, code, bit)
  local at
  msg, at = reason(msg)
  bit = at or bit
  self.err = { path = path, message = msg, code = code or "range",
               bit = bit or self.r:pos() }
  return nil
end

-- The path as structure, for a reader that must not take it apart from
-- its text (a field may be named "x[1]" or "a.b"): each entry has 'up',
-- the open container it is in (nil at the walk's top), and 'name', the
-- step it takes from there: a field's name or an element's or slot's index,
-- also on that field's or element's own presence, changed and slot bits;
-- nil on a container's own bits (count, encoding, index) and on align and
-- check. at() sets the step the entries that follow take.
function Walk:at(name)
  self.name = name
end

-- Report one entry; containers get their width when they close.
-- 'field' is the program field the value is of (not for meta bits).
function Walk:emit(path, kind, bit, value, role, field)
  local e = { path = path, bit = bit, bits = self.r:pos() - bit, value = value,
              kind = kind, depth = self.depth, role = role, field = field,
              up = self.up, name = self.name }
  if self.on then self.on(e) end
  return e
end

function Walk:open(path, kind, role)
  local e = { path = path, bit = self.r:pos(), bits = 0, kind = kind,
              depth = self.depth, role = role, open = true,
              up = self.up, name = self.name }
  if self.on then self.on(e) end
  self.depth = self.depth + 1
  self.up = e
  return e
end

function Walk:close(e, value)
  self.depth = self.depth - 1
  self.up = e.up
  e.bits = self.r:pos() - e.bit
  e.value = value
  e.open = nil
  if self.onclose then self.onclose(e) end
end

-- Count n values against max_values as the driver's decode counts them
-- (SECURITY.md, "Values per decode"): a record 1 plus its fields, a list
-- 1 plus its count, a sparse array 1 plus each slot sent, a quaternion 5.
-- Past it, the driver's failure at the bit it stops on.
function Walk:spend(path, n)
  if n > self.values then
    return self:fail(path, say("values"), "range")
  end
  self.values = self.values - n
  return true
end

-- n bits as a number, reported as an entry of role 'role'; a failure is
-- of 'owner', the path decode names for it (the field or array it is of)
function Walk:meta(path, kind, n, role, owner)
  local bit = self.r:pos()
  local v, msg, code = self.r:bits(n)
  if v == nil then return self:fail(owner, msg, code, bit) end
  self:emit(path, kind, bit, v, role)
  return v
end

-- A tiered integer in [min, max] (core/bw_game.c bw_readtiered).
function Walk:tiered(path, tiers, min, max)
  local r, start, lo = self.r, self.r:pos(), min
  local n = #tiers
  for i = 1, n do
    if lo > max then return self:fail(path, messages.range, "range", start) end
    local hi = max
    if i < n and tiers[i] < 53 then
      local span = pow2(tiers[i]) - 1
      if span <= max - lo then hi = lo + span end
    end
    local take = i == n
    if not take then
      local v, msg, code = r:bits(1)
      if v == nil then return self:fail(path, msg, code) end
      take = v == 1
    end
    if take then
      local nb = bitsfor(hi - lo)
      local u, msg, code = 0, nil, nil
      if nb > 0 then u, msg, code = r:bits(nb) end
      if u == nil then return self:fail(path, msg, code) end
      if u > hi - lo then return self:fail(path, messages.range, "range", start) end
      return lo + u
    end
    lo = hi + 1
  end
end

-- The bits at least an array of 'kept' elements kept (a bit each) and
-- 'fresh' new ones ('per' bits each) needs, as decode names them (up to
-- 2^64 - 1): exact below 2^53, past it the reader's exact text if it can
-- write one (bw_countbits).
function Walk:needbits(kept, fresh, per)
  local need = kept + fresh * (per + 0.0)
  if need < 2 ^ 53 or not self.r.needtext then return need end
  return self.r:needtext(kept, fresh, per)
end

-- The quaternion of 'code' read at 'start'; bits <= 22: the code must be
-- canonical (bw_readquat).
function Walk:quatfromcode(path, f, code, start)
  if f.bits <= 22 and not codes.quatcanonical(self.r, f, code) then
    return self:fail(path, say("quat"), "range", start)
  end
  return codes.quatdecode(self.r, f, code)
end

-- A smallest-three quaternion in full (core/bw_game.c bw_readquat).
function Walk:quat(path, f)
  local r, start = self.r, self.r:pos()
  local code = {}
  for i = 1, 4 do
    local v, msg, code_ = r:bits(i == 1 and 2 or f.bits)
    if v == nil then return self:fail(path, msg, code_) end
    code[i] = v
  end
  return self:quatfromcode(path, f, code, start)
end

-- A difference from code 'base' (core/bw_game.c bw_readdiff): tier flags,
-- then a zigzag offset in that tier, or the escape and the code in full.
-- d = { nbits, top, wrap, tiers }.
function Walk:readdiff(path, d, base)
  local r, start, first = self.r, self.r:pos(), 0
  local n, i = #d.tiers, 1
  while i <= n do
    local b, msg, code = r:bits(1)
    if b == nil then return self:fail(path, msg, code) end
    if b == 1 then break end
    first = first + pow2(d.tiers[i])
    i = i + 1
  end
  local v
  if i > n then
    local msg, code
    v, msg, code = r:bits(d.nbits)
    if v == nil then return self:fail(path, msg, code) end
  else
    local u, msg, code = r:bits(d.tiers[i])
    if u == nil then return self:fail(path, msg, code) end
    local z = first + u
    local odd = z % 2
    local mag = (z - odd) / 2   -- |difference|, or |difference| - 1 below
    if d.wrap then
      if odd == 1 then v = base - mag - 1 else v = base + mag end
      v = v % (d.top + 1)
    elseif odd == 1 then
      v = mag < base and base - mag - 1 or -1
    else
      v = mag <= d.top - base and base + mag or -1
    end
  end
  if v < 0 or v > d.top or base > d.top then
    return self:fail(path, say("diff"), "range", start)
  end
  return v
end

-- The difference parameters of a relative field (bw_fielddiff).
function Walk:diff(f)
  local tiers = f.tiers
  if tiers == nil or #tiers == 0 then tiers = self.reltiers end
  if f.kind == "angle" then
    return { nbits = f.bits, top = pow2(f.bits) - 1, wrap = true, tiers = tiers }
  end
  return { nbits = bitsfor(f.qmax), top = f.qmax, wrap = false, tiers = tiers }
end

-- A relative field against its baseline value 'b' (WIRE.md "Relative
-- differences"), as decrelative in bindings/lbw_decdelta.c: the value, or
-- false when 'b' is no value to start from and the value comes whole.
function Walk:relative(path, f, b)
  if b == M.UNKNOWN then
    return self:fail(path, "a relative difference needs the baseline", "baseline")
  end
  local bit = self.r:pos()
  local v
  if f.kind == "quat" then
    local base = codes.quatencode(self.r, f, b)
    if base == nil then return false end
    local flag, msg, code = self.r:bits(1)
    if flag == nil then return self:fail(path, msg, code, bit) end
    if flag == 0 then
      v = self:quat(path, f)
    else
      local d, qc = self:diff(f), { base[1] }
      for i = 2, 4 do
        qc[i] = self:readdiff(path, d, base[i])
        if qc[i] == nil then return nil end
      end
      v = self:quatfromcode(path, f, qc, bit)
    end
    if v == nil or not self:spend(path, 5) then return nil end
  else
    if type(b) ~= "number" or (f.kind == "angle" and (b ~= b or b == math.huge
      or b == -math.huge)) then
      return false
    end
    if f.kind == "angle" then
      local u = self:readdiff(path, self:diff(f), codes.angleencode(b, f.period, f.bits))
      if u == nil then return nil end
      v = codes.angledecode(u, f.period, f.bits)
    else
      local u = self:readdiff(path, self:diff(f), codes.qencode(self.r, b, f.qmin, f.qdelta, f.qmax))
      if u == nil then return nil end
      v = codes.qfloat(self.r, u, f.qmin, f.qdelta, f.qmax)
    end
  end
  self:emit(path, f.kind, bit, v, "delta", f)
  return v
end

-- The value of field 'f' at 'path'; 'base' is its baseline value when the
-- packet is a delta (nil otherwise).
function Walk:value(path, f, base)
  local kind = f.kind
  if kind == "struct" then
    local e = self:open(path, "struct")
    local v
    if base ~= nil then v = self:deltastruct(path, self.types[f.type], base)
    else v = self:struct(path, self.types[f.type]) end
    if v == nil then return nil end
    self:close(e, v)
    return v
  elseif kind == "array" then
    local e = self:open(path, "array")
    local n = f.min
    if not f.fixed then
      self:at(nil)
      n = self:leafvalue(path .. "#", { kind = "int", min = f.min, max = f.max,
        word = "count" }, "count", path)
      if n == nil then return nil end
    end
    local em = f.of.minbits or 0
    if em > 0 and n > self.r:remaining() / em then
      return self:fail(path, say("need", n, self:needbits(0, n, em), self.r:remaining()),
        "truncated", e.bit)
    end
    if not self:spend(path, 1 + n) then return nil end
    local t = {}
    for i = 1, n do
      self:at(i)
      local x = self:value(path .. "[" .. i .. "]", f.of)
      if x == nil then return nil end
      t[i] = x
    end
    self:close(e, t)
    return t
  elseif kind == "sparse" then
    local e = self:open(path, "sparse")
    -- a delta's 1 at the end: the driver may count it after the encoding
    -- (with the baseline's slots), never before this
    if base == nil and not self:spend(path, 1) then return nil end
    local v = self:sparse(path, f, base)
    if v == nil or (base ~= nil and not self:spend(path, 1)) then return nil end
    self:close(e, v)
    return v
  elseif kind == "quat" then
    local bit = self.r:pos()
    local v = self:quat(path, f)
    if v == nil or not self:spend(path, 5) then return nil end
    self:emit(path, kind, bit, v, nil, f)
    return v
  elseif kind == "float" then
    local bit = self.r:pos()
    local q, msg, code = self.r:bits(bitsfor(f.qmax))
    if q == nil then return self:fail(path, msg, code, bit) end
    if q > f.qmax then return self:fail(path, say("quantized", q, f.qmax), "range", bit) end
    local v = codes.qfloat(self.r, q, f.qmin, f.qdelta, f.qmax)
    self:emit(path, kind, bit, v, nil, f)
    return v
  elseif kind == "angle" then
    local bit = self.r:pos()
    local q, msg, code = self.r:bits(f.bits)
    if q == nil then return self:fail(path, msg, code, bit) end
    local v = codes.angledecode(q, f.period, f.bits)
    self:emit(path, kind, bit, v, nil, f)
    return v
  elseif kind == "tiered" then
    local bit = self.r:pos()
    local v = self:tiered(path, f.tiers, 0, f.span or f.max - f.min)
    if v == nil then return nil end
    -- a reader whose numbers cannot hold min + v (Lua 5.2's) adds it itself
    if self.r.addmin then v = self.r:addmin(f, v) else v = v + f.min end
    self:emit(path, kind, bit, v, nil, f)
    return v
  end
  return self:leafvalue(path, f)
end

-- A scalar; a failure is of 'owner' when given (decode's path for it)
function Walk:leafvalue(path, f, role, owner)
  local bit = self.r:pos()
  local v, msg, code = self.r:leaf(f)
  if v == nil then return self:fail(owner or path, msg, code, bit) end
  self:emit(path, f.kind, bit, v, role, role == nil and f or nil)
  return v
end

-- Whether every key of sparse baseline 'b' is a slot 1..max: else the driver
-- sends the array in full (WIRE.md, "Delta against a baseline")
local function slotsonly(b, max)
  for k in pairs(b) do
    if type(k) ~= "number" or k % 1 ~= 0 or k < 1 or k > max then return false end
  end
  return true
end

local function present(f, version)
  return (f.since or 0) <= version and (f.removed == nil or version < f.removed)
end

function Walk:struct(path, ty)
  if not self:spend(path, 1 + #ty.fields) then return nil end
  local t = {}
  for _, f in ipairs(ty.fields) do
    if not present(f, self.version) then
      if f.name ~= nil and f.default ~= nil then t[f.name] = f.default end
    elseif f.name == nil then   -- align or check: decode names the record
      self:at(nil)
      if self:leafvalue(join(path, "(" .. f.kind .. ")"), f, nil, path) == nil then return nil end
    else
      local p = join(path, f.name)
      local here = true
      self:at(f.name)
      if f.optional then
        local b = self:meta(p .. "?", "bool", 1, "presence", p)
        if b == nil then return nil end
        here = b == 1
      end
      if here then
        local v = self:value(p, f)
        if v == nil then return nil end
        t[f.name] = v
      end
    end
  end
  return t
end

-- A record against its baseline: per field a changed bit, then what changed.
function Walk:deltastruct(path, ty, base)
  if not self:spend(path, 1 + #ty.fields) then return nil end
  local t = {}
  for _, f in ipairs(ty.fields) do
    if f.name == nil then
      self:at(nil)
      if present(f, self.version)
        and self:leafvalue(join(path, "(" .. f.kind .. ")"), f, nil, path) == nil then
        return nil
      end
    elseif not present(f, self.version) then
      if f.default ~= nil then t[f.name] = f.default end
    else
      local p = join(path, f.name)
      local b = base
      if b ~= M.UNKNOWN then
        if type(base) == "table" then b = base[f.name] else b = nil end
      end
      -- a field the baseline lacks is its default, kept or changed from
      if b == nil and not f.optional then b = f.default end
      self:at(f.name)
      local changed = self:meta(p .. "^", "bool", 1, "changed", p)
      if changed == nil then return nil end
      if changed == 0 then
        t[f.name] = self:kept(f, b)
      else
        local here = true
        if f.optional then
          local pb = self:meta(p .. "?", "bool", 1, "presence", p)
          if pb == nil then return nil end
          here = pb == 1
        end
        if here then
          local v = self:deltavalue(p, f, b)
          if v == nil then return nil end
          t[f.name] = v
        end
      end
    end
  end
  return t
end

-- What a delta keeps of baseline value 'b' of field 'f', copied along the
-- schema as the driver copies a baseline it decoded: a field the baseline
-- lacks takes its default, one not on the wire at this version its default
-- too. Values are shown as given: s:decode checks those of a baseline it did
-- not decode and gives their decode (quantized, clamped), which a
-- dissection, reading bits only, leaves to it.
function Walk:kept(f, b)
  if type(b) ~= "table" or b == M.UNKNOWN then return b end
  local t = {}
  if f.kind == "struct" then
    local ty = self.types[f.type]
    for _, g in ipairs(ty.fields) do
      if g.name == nil then   -- luacheck: ignore 542 (align, check: no value)
      elseif not present(g, self.version) then
        t[g.name] = g.default
      else
        local v = b[g.name]
        if v == nil and not g.optional then v = g.default end
        t[g.name] = self:kept(g, v)
      end
    end
  elseif f.kind == "array" or f.kind == "sparse" then
    for k, v in pairs(b) do t[k] = self:kept(f.of, v) end
  else
    for k, v in pairs(b) do t[k] = v end
  end
  return t
end

-- A changed value against its baseline value 'b' (WIRE.md, "Delta against
-- a baseline"): records, arrays and sparse arrays whose baseline is a table
-- are deltas again, everything else is sent in full.
function Walk:deltavalue(p, f, b)
  if f.relative then
    local v = self:relative(p, f, b)
    if v ~= false then return v end
  end
  local known = b == M.UNKNOWN or type(b) == "table"
  if known and f.kind == "struct" then
    local e = self:open(p, "struct", "delta")
    local v = self:deltastruct(p, self.types[f.type], b)
    if v ~= nil then self:close(e, v) end
    return v
  elseif known and f.kind == "array" then
    return self:deltaarray(p, f, b)
  elseif known and f.kind == "sparse" then
    if b ~= M.UNKNOWN and not slotsonly(b, f.max) then return self:value(p, f) end
    return self:value(p, f, b)
  end
  return self:value(p, f)
end

-- An array against its baseline: the count as usual, then per element
-- within the baseline's length bool(changed) and, if changed, the element
-- as a delta of the baseline's; past it, the element in full.
function Walk:deltaarray(path, f, base)
  if base == M.UNKNOWN then
    return self:fail(path, "an array delta needs the baseline", "baseline")
  end
  local e = self:open(path, "array", "delta")
  local n = f.min
  if not f.fixed then
    self:at(nil)
    n = self:leafvalue(path .. "#", { kind = "int", min = f.min, max = f.max,
      word = "count" }, "count", path)
    if n == nil then return nil end
  end
  if not self:spend(path, 1 + n) then return nil end
  -- its first border, as the driver counts it: '#' may pass a hole
  local t, blen = {}, 0
  while base[blen + 1] ~= nil do blen = blen + 1 end
  -- as the driver (bw_countfits): a kept element costs a bit, a new one
  -- its minbits, compared by division (a product may pass 2^63)
  local kept, em, left = math.min(n, blen), f.of.minbits or 0, self.r:remaining()
  if kept > left or (em > 0 and n - kept > (left - kept) / em) then
    return self:fail(path, say("need", n, self:needbits(kept, n - kept, em), left),
      "truncated", e.bit)
  end
  for i = 1, n do
    local p = path .. "[" .. i .. "]"
    self:at(i)
    if i <= blen then
      local c = self:meta(p .. "^", "bool", 1, "changed", p)
      if c == nil then return nil end
      if c == 0 then
        t[i] = self:kept(f.of, base[i])
      else
        local x = self:deltavalue(p, f.of, base[i])
        if x == nil then return nil end
        t[i] = x
      end
    else
      local x = self:value(p, f.of)
      if x == nil then return nil end
      t[i] = x
    end
  end
  self:close(e, t)
  return t
end

-- One sparse slot; against a baseline a presence bit, then a delta when
-- the baseline has a table there.
function Walk:slot(path, f, t, base, i)
  local p = path .. "[" .. i .. "]"
  self:at(i)
  if base == nil then   -- spent before the slot, of the array
    if not self:spend(path, 1) then return nil end
    local v = self:value(p, f.of)
    if v == nil then return nil end
    t[i] = v
    return true
  end
  local b = self:meta(p .. "?", "bool", 1, "presence", p)
  if b == nil then return nil end
  if b == 0 then
    t[i] = nil
    return true
  end
  if not self:spend(p, 1) then return nil end
  local bv = M.UNKNOWN
  if base ~= M.UNKNOWN then bv = base[i] end
  local k = f.of.kind
  if base == M.UNKNOWN and (k == "struct" or k == "array" or k == "sparse") then
    return self:fail(p, "a slot delta needs the baseline", "baseline")
  end
  -- as bw_decdeltavalue: arrays and sparse arrays are deltas too
  local v = self:deltavalue(p, f.of, bv)
  if v == nil then return nil end
  t[i] = v
  return true
end

local ENCODINGS = { mask = 0, index = 1, relative = 2, auto = 3 }
local ENCODING_NAMES = { [0] = "mask", "index", "relative" }

function Walk:sparse(path, f, base)
  local r, n = self.r, f.max
  local start = r:pos()
  local enc = ENCODINGS[f.encoding] or f.encoding
  self:at(nil)
  if enc == 3 then
    enc = self:meta(path .. "~", "enum", 2, "encoding", path)
    if enc == nil then return nil end
    if enc == 3 then return self:fail(path, say("encoding", 3), "range", start) end
  end
  self.sparseenc = ENCODING_NAMES[enc]
  local t = {}
  if base ~= nil and base ~= M.UNKNOWN then
    for k, v in pairs(base) do t[k] = self:kept(f.of, v) end
  end
  if enc == 0 then
    for i = 1, n do
      self:at(i)
      local b = self:meta(path .. "[" .. i .. "]?", "bool", 1, "slot", path)
      if b == nil then return nil end
      if b == 1 and self:slot(path, f, t, base, i) == nil then return nil end
    end
    return t
  end
  local prev = 0
  if enc == 1 then
    local ibits = bitsfor(n - 1)
    local cstart = r:pos()
    local count = self:meta(path .. "#", "int", bitsfor(n), "count", path)
    if count == nil then return nil end
    if count > n then return self:fail(path, say("slots", count, n), "range", cstart) end
    local slotmin = base ~= nil and 1 or (f.of.minbits or 0)
    if ibits + slotmin > 0 and count > r:remaining() / (ibits + slotmin) then
      return self:fail(path, say("slotbits", count), "truncated", cstart)
    end
    for _ = 1, count do
      local istart = r:pos()
      self:at(nil)
      local i = self:meta(path .. "@", "int", ibits, "index", path)
      if i == nil then return nil end
      i = i + 1
      if i <= prev or i > n then
        return self:fail(path, say("index", i, prev + 1, n), "range", istart)
      end
      if self:slot(path, f, t, base, i) == nil then return nil end
      prev = i
    end
    return t
  end
  while true do   -- relative: rising indices up to the end mark n + 1
    local istart = r:pos()
    local cur
    self:at(nil)
    if f.tiers ~= nil and #f.tiers > 0 then
      local d = self:tiered(path, f.tiers, 1, n + 1)
      if d == nil then return nil end
      cur = prev + d
    else
      local msg, code
      cur, msg, code = r:int_relative(prev)
      if cur == nil then return self:fail(path, msg, code, istart) end
    end
    self:emit(path .. "@", "int", istart, cur, cur == n + 1 and "end" or "index")
    if cur == n + 1 then break end
    if cur > n then
      return self:fail(path, say("indexmax", cur, n), "range", istart)
    end
    if self:slot(path, f, t, base, cur) == nil then return nil end
    prev = cur
  end
  return t
end

-- Walk type 'name' of 'program' over reader 'r'. opts: version, baseline
-- (a value, or M.UNKNOWN), max_values (default M.MAX_VALUES), on(entry) and
-- onclose(entry) callbacks, path (prefix). A full walk counts values as
-- s:decode does, failing at its bit; a delta counts only what it reads
-- (never more than the driver, which counts what it keeps too). Returns
-- the value, or nil and the error {path, message, code, bit}.
function M.walk(program, name, r, opts)
  opts = opts or {}
  local ty = program.byname[name]
  if ty == nil then error("bitwire.walk: no type '" .. tostring(name) .. "'", 2) end
  local w = setmetatable({ r = r, types = program.byname, depth = opts.depth or 0,
    version = opts.version or program.version, on = opts.on,
    reltiers = program.relative_tiers or {}, values = opts.max_values or M.MAX_VALUES,
    onclose = opts.onclose }, Walk)
  local prefix = opts.path or ""
  local v
  if opts.baseline ~= nil then v = w:deltastruct(prefix, ty, opts.baseline)
  else v = w:struct(prefix, ty) end
  if v == nil then return nil, w.err end
  return v
end

-- The frame header after the CRC, as bitwire.protocol writes it (see
-- WIRE.md "Frame header"): [tag 32] [version] [delta bit, baseline id
-- 16] [message type]. One function, so a new header layout changes here only.
-- opts: tag (true: this program's; an integer: that tag, as s:frame_decode's
-- header option tag), version_bits, deltas, baseline_id. Returns the header
-- or nil, error; a failure's path is its part's (M.paths), as decode's.
function M.header(program, r, opts, on)
  local h = {}
  local function fail(key, message, code, bit)
    return nil, { path = paths[key], message = message, code = code, bit = bit }
  end
  local function field(key, n)
    local bit = r:pos()
    local v, msg, code = r:bits(n)
    if v == nil then
      local why, at = reason(msg)
      return fail(key, why, code, at or bit)
    end
    if on then on({ path = paths[key], bit = bit, bits = n, value = v,
      kind = "uint", depth = 0, role = "header" }) end
    h[key] = v
    return v
  end
  local ok, err
  if opts.tag then
    ok, err = field("tag", 32)
    if not ok then return nil, err end
    -- the tag names the definitions (the fingerprint's high 32 bits), or
    -- is the one given: another's frame is not read as these, as the core
    -- refuses it
    if type(opts.tag) == "number" then
      if h.tag ~= opts.tag then
        return fail("tag", say("tagged", string.format("%08x", h.tag),
          string.format("%08x", opts.tag)), "schema", 32)
      end
    else
      local mine = program.fingerprint and tonumber(program.fingerprint:sub(1, 8), 16)
      if mine and h.tag ~= mine then
        return fail("tag", say("schema", string.format("%08x", h.tag), program.fingerprint),
          "schema", 32)
      end
    end
  end
  if (opts.version_bits or 0) > 0 then
    local bit = r:pos()
    ok, err = field("version", opts.version_bits)
    if not ok then return nil, err end
    -- 2^32 - 1 is no version (BW_MAXVERSION): the core refuses it
    if h.version > 4294967294 then
      return fail("version", say("version", h.version, 4294967294), "range", bit)
    end
  end
  if opts.deltas then
    ok, err = field("delta", 1)
    if not ok then return nil, err end
    if h.delta == 1 then
      ok, err = field("baseline_id", 16)
      if not ok then return nil, err end
    end
  end
  local bit = r:pos()
  ok, err = field("type", program.typebits)
  if not ok then return nil, err end
  -- a delta of a baseline other than opts.baseline_id (nil: any) is
  -- refused before its type is looked at, as the core's frame decode does
  if h.delta == 1 and opts.baseline_id ~= nil and h.baseline_id ~= opts.baseline_id then
    return fail("baseline_id", say("baseline", h.baseline_id), "baseline", bit - 16)
  end
  -- a message id, not a type id: program.messages numbers the messages
  local name = program.messages[h.type + 1]
  if name == nil then
    return fail("type", say("msgtype", h.type, #program.messages - 1), "tag", bit)
  end
  h.name = name
  return h
end

return M
