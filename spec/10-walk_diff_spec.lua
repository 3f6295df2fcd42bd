-- dissect against decode, differentially: over schemas of nested and
-- sparse arrays, optionals, quaternions, strings, versioned fields, tiered
-- and relative numbers, deltas against baselines (decoded, by hand,
-- damaged) and random or damaged packets, s:dissect succeeds exactly when
-- s:decode does (with its value, but for a delta's kept values, which a
-- dissection shows as given) and fails with its message (field path,
-- words, bit) and code; a framed packet likewise through dissect.frame.
-- Seeded, and quick.
local bitwire = require "bitwire"
local core = require "bitwire.core"
local dissect = require "bitwire.dissect"
local walk = require "bitwire.walk"
local H = require "spec.helpers"

local SCHEMAS = {
  {
    V = { { "x", "float", min = -8, max = 8, res = 0.3 }, { "y", "float32" } },
    I = { { "id", "uint", bits = 5 }, { "n", "int", min = -3, max = 20 },
          { "e", "enum", values = { "a", "b", "c", "d", "e" } } },
    R = { { "x", "float", min = -100, max = 100, res = 0.05, delta = "relative" },
          { "h", "angle", bits = 12, delta = "relative", tiers = { 2, 6 } },
          { "q", "quat", bits = 9, delta = "relative" },
          { "w", "quat", bits = 16, delta = "relative", optional = true },
          { "t", "tiered", tiers = { 1, 3 }, min = -4, max = 3 } },
    E = { { "id", "int", min = -8, max = 300 }, { "kind", "enum", values = { "a", "b", "c" } },
          { "pos", "V" }, { "name", "string", max = 6, optional = true },
          { "tags", "array", of = { "array", of = { "uint", bits = 3 }, max = 3 }, max = 4 },
          { "q", "quat", bits = 7 }, { "t", "tiered", tiers = { 2, 4 }, min = -5, max = 10 },
          { "blob", "bytes", max = 5, optional = true }, { "key", "bytes", count = 2 },
          { "armor", "int", min = 0, max = 200, since = 2, default = 7 },
          { "old", "bool", removed = 2, default = false },
          { "align" }, { "flag", "bool" }, { "check" }, { "yaw", "angle", bits = 6 } },
    S = { { "tick", "uint", bits = 9 },
          { "mask", "sparse", of = "I", max = 7, encoding = "mask" },
          { "index", "sparse", of = "I", max = 30, encoding = "index" },
          { "rel", "sparse", of = { "int", min = 0, max = 9 }, max = 300, encoding = "relative" },
          { "art", "sparse", of = "I", max = 100, encoding = "relative", tiers = "article" },
          { "auto", "sparse", of = "I", max = 40 },
          { "ents", "array", of = "E", max = 3 }, { "me", "E", optional = true },
          { "rs", "array", of = "R", max = 3 },
          { "nest", "sparse", of = { "array", of = "I", max = 3 }, max = 5, encoding = "index" },
          { "slots", "sparse", of = { "angle", bits = 9, delta = "relative" }, max = 9 },
          { "r", "R" } },
  },
  {
    P = { { "a", "uint", bits = 5 }, { "b", "int", min = -3, max = 3 }, { "c", "bool" },
          { "d", "enum", values = { "x", "y", "z" } }, { "e", "float", min = -1, max = 1, res = 0.1 },
          { "f", "angle", bits = 7 } },
    O = { { "a", "uint", bits = 4, optional = true }, { "b", "int", min = 0, max = 5, optional = true },
          { "c", "bool", optional = true }, { "d", "enum", values = { "p", "q" }, optional = true } },
    Q = { { "q", "quat", bits = 6 }, { "r", "quat", bits = 11, delta = "relative" } },
    V = { { "x", "int", min = 0, max = 9, since = 1 },
          { "y", "int", min = 0, max = 9, removed = 2, default = 3 },
          { "z", "string", max = 3, since = 2, default = "d" }, { "align" }, { "w", "bool" } },
    T = { { "flat", "P" }, { "opt", "O" }, { "xs", "array", of = { "int", min = -2, max = 5 }, max = 20 },
          { "fx", "array", of = { "uint", bits = 3 }, count = 3 }, { "qs", "array", of = "Q", max = 3 },
          { "ss", "array", of = { "array", of = { "string", max = 3 }, max = 2 }, max = 2 },
          { "sp", "sparse", max = 4,
            of = { "sparse", of = { "int", min = 0, max = 3 }, max = 5, encoding = "mask" } },
          { "ver", "V" }, { "big", "int", min = math.mininteger, max = math.maxinteger },
          { "u64", "uint", bits = 64 }, { "d", "float64" },
          { "sq", "sparse", of = { "quat", bits = 8, delta = "relative" }, max = 6, encoding = "index" },
          { "sr", "array", of = { "float", min = 0, max = 50, res = 0.5, delta = "relative" }, max = 4 },
          { "ps", "sparse", of = "P", max = 20, encoding = "relative", tiers = { 1, 2 } },
          { "check" } },
  },
  {
    Z = {},
    O = { { "a", "bool", optional = true }, { "b", "Z", optional = true } },
    P = { { "a", "uint", bits = 1 }, { "b", "int", min = 5, max = 5 },
          { "c", "float", min = 0, max = 8388609, res = 1 } },
    T = { { "zs", "array", of = "Z", max = 60000 }, { "os", "array", of = "O", max = 300 },
          { "one", "sparse", of = "P", max = 1, encoding = "index" },
          { "m1", "sparse", of = { "bool" }, max = 1, encoding = "mask" },
          { "t1", "tiered", tiers = { 3 }, min = -2, max = 5 },
          { "qb", "quat", bits = 24 }, { "qs", "quat", bits = 2 },
          { "str", "string", max = 1000, optional = true },
          { "fb", "bytes", count = 3 }, { "e1", "enum", values = { "only" } },
          { "big", "sparse", of = { "int", min = 0, max = 1 }, max = 4294967294,
            encoding = "relative" },
          { "aa", "array", of = { "array", of = { "array", of = "P", max = 2 }, max = 2 }, max = 2 },
          { "align" }, { "w", "uint", bits = 33 } },
  },
}

-- Random values of a program's types, from H.lcg's 'raw'.
local function values(p, raw)
  local function rand(n) return raw(n) + 1 end
  local value
  local function record(name, version)
    local t = {}
    for _, f in ipairs(p.byname[name].fields) do
      local here = (f.since or 0) <= version and (f.removed == nil or version < f.removed)
      if f.name and here and (not f.optional or rand(2) == 1) then t[f.name] = value(f, version) end
    end
    return t
  end
  function value(f, version)
    local k = f.kind
    if k == "int" or k == "tiered" then
      if f.max - f.min > 1 << 40 or f.max - f.min < 0 then
        return ({ f.min, f.max, 0, -1, 7 })[rand(5)]
      end
      return f.min + rand(f.max - f.min + 1) - 1
    elseif k == "uint" then
      if f.bits > 40 then return ({ -1, 0, math.maxinteger, 12345 })[rand(4)] end
      return rand(1 << f.bits) - 1
    elseif k == "bool" then return rand(2) == 1
    elseif k == "float" then return f.fmin + (f.fmax - f.fmin) * rand(1000) / 1000
    elseif k == "float32" or k == "float64" then return rand(100000) / 8
    elseif k == "enum" then return f.values[rand(#f.values)]
    elseif k == "string" then return string.rep("x", rand(math.min(f.max, 9) + 1) - 1)
    elseif k == "bytes" then
      return H.randbytes(raw, f.fixed and f.min or f.min + rand(f.max - f.min + 1) - 1)
    elseif k == "array" then
      local t = {}
      for i = 1, f.fixed and f.min or f.min + rand(math.min(f.max, 30) - f.min + 1) - 1 do
        t[i] = value(f.of, version)
      end
      return t
    elseif k == "struct" then return record(f.type, version)
    elseif k == "sparse" then
      local t, dense = {}, rand(3)
      for i = 1, math.min(f.max, 60) do
        if rand(dense == 1 and 2 or 10) == 1 then t[i] = value(f.of, version) end
      end
      if f.max > 1000 and rand(2) == 1 then t[f.max - rand(3) + 1] = value(f.of, version) end
      return t
    elseif k == "angle" then return (rand(2000) - 1000) * f.period / 333
    elseif k == "quat" then
      return { rand(200) - 100, rand(200) - 100, rand(200) - 100, rand(199) }
    end
    error("no generator for " .. k)
  end
  return record, rand
end

-- A baseline by hand, damaged: fields missing or of the wrong type, keys
-- that are no slot.
local function damaged(v, rand, depth)
  if type(v) ~= "table" or depth > 3 then
    return ({ nil, "s", 1e300, v, v, v, v, v, v, v })[rand(10)]
  end
  local t, keys = {}, {}
  for k in pairs(v) do keys[#keys + 1] = k end
  -- in one order every run: pairs' order moves with the string hash seed
  table.sort(keys, function (a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return a < b
  end)
  for _, k in ipairs(keys) do t[k] = damaged(v[k], rand, depth + 1) end
  if rand(8) == 1 then t[rand(5)] = rand(3) end
  return t
end

-- 'b' cut, a bit flipped, a byte replaced, bytes put in or taken out, or
-- random bytes instead.
local function mutate(b, raw, rand)
  local i, m = rand(#b + 1), rand(6)
  if #b == 0 or m == 4 then return H.randbytes(raw, rand(#b + 4) - 1)
  elseif m == 1 then return b:sub(1, i - 2)
  elseif m == 2 then
    i = rand(#b)
    return b:sub(1, i - 1) .. string.char(b:byte(i) ~ (1 << (rand(8) - 1))) .. b:sub(i + 1)
  elseif m == 3 then return b:sub(1, i - 1) .. H.randbytes(raw, 1) .. b:sub(i + 1)
  elseif m == 5 then return b:sub(1, i - 1) .. H.randbytes(raw, rand(3)) .. b:sub(i)
  end
  return b:sub(1, i - 1) .. b:sub(i + 1 + rand(3))
end

describe("s:dissect against s:decode", function()
  for n, desc in ipairs(SCHEMAS) do
    it("fails exactly where decode fails, as decode words it: schemas " .. n, function()
      local s = bitwire.schema(desc)
      local p = s:program()
      local raw = H.lcg(1000 + n)
      local record, rand = values(p, raw)
      local names = {}
      for name in pairs(desc) do names[#names + 1] = name end
      table.sort(names)
      local failed, codes = 0, {}
      for _ = 1, 700 do
        local name = names[rand(#names)]
        local version = rand(p.version + 1) - 1
        local opts = { version = version }
        local b = rand(4)
        if b == 1 then   -- a baseline decode made
          opts.baseline = s:decode(name, s:encode(name, record(name, version), opts), opts)
        elseif b == 2 then
          opts.baseline = record(name, version)
          if rand(3) == 1 then opts.baseline = damaged(opts.baseline, rand, 0) end
        end
        local ok, bytes = pcall(s.encode, s, name, record(name, version), opts)
        if not ok then bytes = s:encode(name, record(name, version), { version = version }) end
        if rand(5) > 1 then bytes = mutate(bytes, raw, rand) end
        if rand(4) == 1 then opts.max_values = rand(200) end
        local want, msg, code = s:decode(name, bytes, opts)
        local list, wmsg, wcode = s:dissect(name, bytes, opts)
        assert.same({ msg, code }, { wmsg, wcode })
        assert.is_table(list)
        if want == nil then
          failed = failed + 1
          codes[code] = true
        elseif opts.baseline == nil then   -- and the value decode gives
          assert.same(want, walk.walk(p, name, dissect.reader(bitwire.reader(bytes)), opts))
        end
      end
      assert.is_true(failed > 150)  -- of 700: failures are well covered
      assert.is_true(codes.truncated and codes.range and (n == 3 or codes.check) and true)
    end)
  end

  -- frames as s:frame_decode reads them (bitwire.protocol's call), over
  -- each header option: damaged under a good CRC, with a bad CRC, cut
  -- short, read with another tag or with no baseline held. A header field
  -- fails with its own path (frame.type), as decode names it.
  it("reads frames where the protocol fails, as it words it", function()
    local s = bitwire.schema {
      A = { { "x", "int", min = -4, max = 40 }, { "s", "string", max = 4, optional = true },
            { "l", "array", of = { "uint", bits = 3 }, max = 4 } },
      B = { { "q", "quat", bits = 9, delta = "relative" }, { "sp", "sparse", of = "A", max = 9 },
            { "v", "int", min = 0, max = 7, since = 2 },
            { "r", "float", min = 0, max = 9, res = 0.5, delta = "relative" } },
      C = {}, messages = { "B", "A", "C" } }
    local other = s:tag() ~ 0x100   -- a tag that is not this schema's
    -- { encode's header [, decode's] }
    local HDRS = {
      { { id = 7, fingerprint = true } }, { { id = 7, deltas = true } },
      { { id = 7, version_bits = 3 } }, { { id = 7, deltas = true, check = false } },
      { { id = 7, version_bits = 32, deltas = true } }, { { id = 7, tagged = true } },
      { { id = 7, tag = s:tag(), deltas = true, version_bits = 2 } },
      { { id = 7, tagged = true }, { id = 7, tag = other } },
    }
    local raw = H.lcg(77)
    local record, rand = values(s:program(), raw)
    local failed, paths = 0, {}
    for _ = 1, 800 do
      local c = HDRS[rand(#HDRS)]
      local hdr, dec = c[1], c[2] or c[1]
      local check = hdr.check ~= false
      local wire = hdr.fingerprint and core.protocol_id(hdr.id, s:fingerprint()) or hdr.id
      local name = ({ "A", "B", "C" })[rand(3)]
      local base = record(name, s:version())
      local eopts = { version = hdr.version_bits and rand(4) - 1 or nil }
      if hdr.deltas and rand(2) == 1 then eopts.baseline, eopts.baseline_id = base, 0 end
      local bytes = s:frame_encode(hdr, name, record(name, eopts.version or s:version()), eopts)
      local m = rand(9)
      if m <= 5 then   -- damaged under a good CRC, so the fields are read
        local body = mutate(bytes:sub(5, check and -5 or -1), raw, rand)
        bytes = H.forge(wire, body .. (check and "\x78\x56\x34\x12" or ""))
      elseif m == 6 then   -- a bad CRC
        local i = rand(#bytes)
        bytes = bytes:sub(1, i - 1) .. string.char(bytes:byte(i) ~ (1 << (rand(8) - 1)))
          .. bytes:sub(i + 1)
      elseif m == 7 then   -- too short for a frame, or its CRC
        bytes = bytes:sub(1, rand(9) - 1)
      elseif m == 8 and check then   -- the end check left out, under a good CRC
        bytes = H.forge(wire, bytes:sub(5, -5))
      end
      -- a receiver holds baseline 0, or none (no id is its: -1)
      local held = hdr.deltas and rand(4) > 1
      local got, msg, code = s:frame_decode(dec, bytes, held and { baselines = { [0] = base } } or nil)
      local _, _, v, err = dissect.frame(s, bytes, { wire_id = wire, endcheck = check,
        deltas = dec.deltas, version_bits = dec.version_bits, tag = dec.tag or dec.tagged,
        baseline = held and base or nil, baseline_id = hdr.deltas and (held and 0 or -1) or nil })
      if got == nil then
        failed = failed + 1
        if code ~= "crc" then assert.is_nil(v) end   -- under a bad CRC it reads on
        assert.same({ msg, code }, { dissect.errtext(err), err.code })
        paths[err.path] = true
      else
        assert.is_nil(err)
      end
    end
    assert.is_true(failed > 300)
    for _, part in ipairs { "frame", "crc", "tag", "version", "delta", "baseline_id", "type",
                            "check" } do
      assert.is_true(paths[core.frame_paths[part]], part)
    end
  end)
end)
