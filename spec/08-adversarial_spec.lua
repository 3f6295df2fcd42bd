-- Adversarial inputs: every count and length at its maximum and one past it,
-- claims of gigabytes, nesting past BW_MAXDEPTH, float edge values, int64
-- extremes, bad UTF-8, truncation at every byte, single-bit flips under the
-- CRC, trailing bytes, baselines a packet does not match, and bad arguments.
-- Encode raises on a value that does not fit; decode gives nil, message,
-- code on bad bytes and never raises; a bad argument raises.
local bitwire = require "bitwire"
local helpers = require "spec.helpers"
local tohex, fromhex, KNOWN_CODES = helpers.tohex, helpers.fromhex, helpers.KNOWN_CODES

local MAXI, MINI = math.maxinteger, math.mininteger
local NAN, INF = 0 / 0, math.huge

-- the message of the error 'fn' raises (nil if it does not raise)
local function errorof (fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then return nil end
  return tostring(err)
end

-- asserts that 'fn' raises an error containing 'needle' literally
local function raises (needle, fn, ...)
  local err = errorof(fn, ...)
  assert(err, "expected an error containing '" .. needle .. "', got none")
  assert(err:find(needle, 1, true), "expected '" .. needle .. "' in '" .. err .. "'")
end

-- asserts decode's failure shape: nil, "... (bit N)", code [, needle]
local function fails (code, needle, v, err, c)
  assert.is_nil(v)
  assert.is_string(err)
  assert.matches("%(bit %d+%)$", err)
  assert.equal(code, c)
  if needle then
    assert(err:find(needle, 1, true), "expected '" .. needle .. "' in '" .. err .. "'")
  end
end

-- a decode that must not raise: its results, or a failed assertion
local function safe (fn, ...)
  local r = table.pack(pcall(fn, ...))
  assert(r[1], "decode raised: " .. tostring(r[2]))
  return table.unpack(r, 2, r.n)
end

-- bytes made by a writer: build(w) writes into a fresh writer
local function bytes (build)
  local w = bitwire.writer()
  build(w)
  return w:tostring()
end

-- deterministic 64-bit LCG; next(n) -> 0..n-1
local function lcg (seed)
  local state = seed
  return function (n)
    state = state * 6364136223846793005 + 1442695040888963407
    return (state >> 33) % n
  end
end

-- Run 'script' in a lua5.4 of its own (the same core: LUA_CPATH, and
-- LD_PRELOAD under ASan), where a small heap lets a GC cycle, and the
-- finalizers, land inside the calls every run, as the suite's large heap
-- does not. It ends writing "during N", the finalizers that ran inside a
-- call: at least one must.
local function fresh (script)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(script)
  f:close()
  local env = string.format("LUA_PATH=%q LUA_CPATH=%q ", package.path, package.cpath)
  local p = assert(io.popen(env .. "lua5.4 " .. path .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  os.remove(path)
  assert.is_true(ok, out)
  local during = tonumber(out:match("^during (%d+)\n$"))
  assert(during and during > 0, out)
end

local function f32hex (x) return tohex(string.pack("<f", x)) end
local function f64hex (x) return tohex(string.pack("<d", x)) end


describe("counts and lengths at max and max + 1", function ()
  local s = bitwire.schema {
    Str = { { "s", "string", max = 20 } },
    Blob = { { "b", "bytes", min = 2, max = 20 } },
    Fixed = { { "b", "bytes", count = 4 } },
    Arr = { { "a", "array", of = "bool", min = 1, max = 20 } },
    FixArr = { { "a", "array", of = { "int", min = 0, max = 3 }, count = 3 } },
    Enum = { { "e", "enum", values = { "a", "b", "c" } } },
    Int = { { "i", "int", min = -5, max = 20 } },
    Index = { { "sp", "sparse", of = "bool", max = 20, encoding = "index" } },
    Rel = { { "sp", "sparse", of = "bool", max = 20, encoding = "relative" } },
    Mask = { { "sp", "sparse", of = "bool", max = 20, encoding = "mask" } },
    Art = { { "sp", "sparse", of = "bool", max = 20, encoding = "relative",
              tiers = "article" } },
    Auto = { { "sp", "sparse", of = "bool", max = 20 } },
  }
  local function list (n, x)
    local t = {}
    for i = 1, n do t[i] = x end
    return t
  end

  describe("encode", function ()
    -- type, field, a value at the edge (encodes), values past it (raise)
    local cases = {
      { "Str", "s", ("x"):rep(20), { { ("x"):rep(21), "string of 21 bytes longer than max 20" } } },
      { "Blob", "b", ("x"):rep(20), { { ("x"):rep(21), "length 21 out of range [2, 20]" },
                                      { "x", "length 1 out of range [2, 20]" } } },
      { "Blob", "b", "xy", {} },
      { "Fixed", "b", "1234", { { "12345", "length of 5 must have exactly 4" },
                                { "123", "length of 3 must have exactly 4" } } },
      { "Arr", "a", list(20, true), { { list(21, true), "count 21 out of range [1, 20]" },
                                      { {}, "count 0 out of range [1, 20]" } } },
      { "FixArr", "a", { 0, 1, 3 }, { { { 0, 1, 2, 3 }, "count of 4 must have exactly 3" },
                                      { { 0, 4, 0 }, "a[2]: 4 out of range [0, 3]" } } },
      { "Enum", "e", "c", { { "d", "'d' is not one of its enum values" } } },
      { "Int", "i", 20, { { 21, "21 out of range [-5, 20]" }, { -6, "-6 out of range [-5, 20]" } } },
      { "Int", "i", -5, {} },
    }
    for _, k in ipairs { "Index", "Rel", "Mask", "Art", "Auto" } do
      cases[#cases + 1] = { k, "sp", { [1] = true, [20] = false },
        { { { [21] = true }, "sparse keys must be integers in [1, 20]" },
          { { [0] = true }, "sparse keys must be integers in [1, 20]" },
          { { x = true }, "sparse keys must be integers in [1, 20]" },
          { { [1.5] = true }, "sparse keys must be integers in [1, 20]" } } }
    end
    for _, c in ipairs(cases) do
      local name, field, edge, past = c[1], c[2], c[3], c[4]
      it(name .. " takes the edge value and refuses one past it", function ()
        local v = assert(s:decode(name, s:encode(name, { [field] = edge })))
        assert.same(edge, v[field])
        for _, p in ipairs(past) do
          raises(p[2], s.encode, s, name, { [field] = p[1] })
        end
      end)
    end
  end)

  describe("decode of hand-built bytes", function ()
    local cases = {
      { "a string length of max", "Str", function (w) w:bits(20, 5) w:bytes(("x"):rep(20)) end },
      { "a string length of max + 1", "Str", function (w) w:bits(21, 5) w:bytes(("x"):rep(21)) end,
        "range", "s: length 21 out of range [0, 20] (bit 0)" },
      { "a bytes length of max", "Blob", function (w) w:bits(18, 5) w:bytes(("x"):rep(20)) end },
      { "a bytes length of max + 1", "Blob", function (w) w:bits(19, 5) w:bytes(("x"):rep(21)) end,
        "range", "b: length 21 out of range [2, 20] (bit 0)" },
      { "an array count of max", "Arr", function (w) w:bits(19, 5) for _ = 1, 20 do w:bool(true) end end },
      { "an array count of max + 1", "Arr", function (w) w:bits(20, 5) for _ = 1, 21 do w:bool(true) end end,
        "range", "a: count 21 out of range [1, 20] (bit 0)" },
      { "the last enum index", "Enum", function (w) w:bits(2, 2) end },
      { "an enum index past the values", "Enum", function (w) w:bits(3, 2) end,
        "range", "e: 3 out of range [0, 2] (bit 0)" },
      { "an int offset of max + 1", "Int", function (w) w:bits(26, 5) end,
        "range", "i: 21 out of range [-5, 20] (bit 0)" },
      { "a sparse count of max", "Index", function (w)
          w:bits(20, 5) for i = 0, 19 do w:bits(i, 5) w:bool(true) end end },
      { "a sparse count of max + 1", "Index", function (w)
          w:bits(21, 5) for i = 0, 20 do w:bits(i, 5) w:bool(true) end end,
        "range", "sp: count 21 above max 20 (bit 0)" },
      { "a sparse index of max + 1", "Index", function (w) w:bits(1, 5) w:bits(20, 5) w:bool(true) end,
        "range", "sp: index 21 not in [1, 20] (bit 5)" },
      { "a sparse index that does not rise", "Index", function (w)
          w:bits(2, 5) w:bits(4, 5) w:bool(true) w:bits(4, 5) w:bool(true) end,
        "range", "sp: index 5 not in [6, 20] (bit 11)" },
      { "a relative index of max", "Rel", function (w)
          w:int_relative(0, 20) w:bool(true) w:int_relative(20, 21) end },
      { "a relative index of max + 2", "Rel", function (w) w:int_relative(0, 22) end,
        "range", "sp: index 22 above max 20 (bit 0)" },
      { "an article-tier index past the sentinel", "Art", function (w)
          w:bits(0, 1) w:bits(1, 1) w:bits(3, 2) w:bool(true)   -- +5: 5
          w:bits(0, 3) w:bits(1, 1) w:bits(3, 3) end,            -- +17: 22
        "range", "sp: index 22 above max 20 (bit 5)" },
      { "an article-tier flag past the last tier", "Art", function (w)
          w:bits(0, 5) end,
        "range", "sp: value out of range (bit 0)" },
      { "the sparse encoding 3 (none)", "Auto", function (w) w:bits(3, 2) end,
        "range", "sp: unknown sparse encoding 3 (bit 0)" },
    }
    for _, c in ipairs(cases) do
      it("gives " .. (c[4] or "a value") .. " for " .. c[1], function ()
        local v, err, code = safe(s.decode, s, c[2], bytes(c[3]))
        if c[4] then fails(c[4], nil, v, err, code); assert.equal(c[5], err)
        else assert.is_table(v, err) end
      end)
    end
  end)
end)


describe("claims of gigabytes", function ()
  local s = bitwire.schema {
    Vec = { { "x", "float", min = -1, max = 1, res = 0.01 },
            { "y", "float", min = -1, max = 1, res = 0.01 } },
    Huge = { { "xs", "array", of = "Vec", max = 1 << 31 } },
    Bits = { { "xs", "array", of = "bool", max = 1 << 40 } },
    Strs = { { "xs", "array", of = { "string", max = 100 }, max = 1 << 31 } },
    Grid = { { "xs", "array", of = { "array", of = "bool", max = 3 }, max = 1 << 31 } },
    Blob = { { "b", "bytes", max = 1 << 40 } },
    Index = { { "sp", "sparse", of = "Vec", max = 0xFFFFFFFE, encoding = "index" } },
    Rel = { { "sp", "sparse", of = "bool", max = 0xFFFFFFFE, encoding = "relative" } },
    Mask = { { "sp", "sparse", of = "bool", max = 0xFFFFFFFE, encoding = "mask" } },
    Zeros = { { "zs", "array", of = { "int", min = 3, max = 3 }, max = 1000 } },
  }

  -- decode with the collector stopped: any table it made would show
  -- CPU seconds that tell a decode bounded by its input from one that
  -- walks what the bytes claim (2^31 and more steps: seconds even at a
  -- nanosecond a step), with room for memcheck, which runs these specs
  -- 20 to 50 times slower (0.05 s failed there once)
  local BOUNDED = 1.0

  local function measured (name, b)
    collectgarbage("collect")
    collectgarbage("stop")
    local before, t0 = collectgarbage("count"), os.clock()
    local v, err, code = safe(s.decode, s, name, b)
    local grew, took = collectgarbage("count") - before, os.clock() - t0
    collectgarbage("restart")
    return v, err, code, grew, took
  end

  local cases = {
    { "2^31 records", "Huge", function (w) w:int(1 << 31, 0, 1 << 31) end,
      "xs: count 2147483648 needs 34359738368 bits or more, 0 left (bit 0)" },
    { "2^31 records, with 1 KiB after", "Huge",
      function (w) w:int(1 << 31, 0, 1 << 31) w:bytes(("\255"):rep(1024)) end,
      "xs: count 2147483648 needs 34359738368 bits or more, 8192 left (bit 0)" },
    { "2^40 bools", "Bits", function (w) w:int(1 << 40, 0, 1 << 40) end },
    { "2^31 - 1 strings", "Strs", function (w) w:int((1 << 31) - 1, 0, 1 << 31) end },
    { "2^31 arrays", "Grid", function (w) w:int(1 << 31, 0, 1 << 31) end },
    { "2^40 bytes", "Blob", function (w) w:int(1 << 40, 0, 1 << 40) end },
    { "2^32 - 2 sparse slots by index", "Index",
      function (w) w:bits(0xFFFFFFFE, 32) w:bytes(("\0"):rep(64)) end },
  }
  for _, c in ipairs(cases) do
    it("refuses " .. c[1] .. " as truncated, quickly, allocating nothing", function ()
      local v, err, code, grew, took = measured(c[2], bytes(c[3]))
      fails("truncated", nil, v, err, code)
      if c[4] then assert.equal(c[4], err) end
      assert(grew < 64, "decode allocated " .. grew .. " KiB")
      assert(took < BOUNDED, "decode took " .. took .. " s")
    end)
  end

  it("takes a count the bits left can hold, and refuses one more", function ()
    -- 41 bits of count, then the bools: the bits left after the count
    -- (padding of the last byte included) bound the count
    local b = bytes(function (w) w:int(100, 0, 1 << 40) for _ = 1, 100 do w:bool(true) end end)
    local left = #b * 8 - 41
    local exact = bytes(function (w)
      w:int(left, 0, 1 << 40) for _ = 1, 100 do w:bool(true) end end)
    local v = assert(s:decode("Bits", exact))
    assert.equal(left, #v.xs)
    local over = bytes(function (w)
      w:int(left + 1, 0, 1 << 40) for _ = 1, 100 do w:bool(true) end end)
    fails("truncated", "count " .. (left + 1) .. " needs", s:decode("Bits", over))
  end)

  it("bounds relative and mask sparse decodes by the input's bits", function ()
    for _, name in ipairs { "Rel", "Mask" } do
      local v, err, code, grew, took = measured(name, ("\255"):rep(64))
      fails("truncated", nil, v, err, code)
      assert(took < BOUNDED, name .. " took " .. took .. " s")
      assert(grew < 256, name .. " allocated " .. grew .. " KiB")
    end
  end)

  it("bounds arrays of zero-bit elements by their declared max alone", function ()
    -- SECURITY.md: the schema, not the input, limits these
    local v = assert(s:decode("Zeros", bytes(function (w) w:int(1000, 0, 1000) end)))
    assert.equal(1000, #v.zs)
    assert.equal(3, v.zs[1000])
  end)
end)


describe("nesting depth", function ()
  local function chain (n, extra)
    local d = {}
    for i = 1, n do
      d["D" .. i] = { { "v", "int", min = 0, max = 7 },
        i < n and { "next", "D" .. (i + 1), optional = extra ~= false } or nil }
    end
    return d
  end

  it("compiles and decodes 32 levels of records (BW_MAXDEPTH)", function ()
    local s = bitwire.schema(chain(32))
    local v = { v = 1 }
    local leaf = v
    for _ = 2, 32 do leaf.next = { v = 7 }; leaf = leaf.next end
    local got = assert(s:decode("D1", s:encode("D1", v)))
    assert.same(v, got)
  end)

  it("refuses 33 levels of records at compile, naming the limit", function ()
    raises("bitwire.schema: D1: nesting deeper than 32 levels", bitwire.schema, chain(33))
  end)

  it("refuses nested inline arrays past 32 levels", function ()
    local function nest (k)
      local of = "bool"
      for _ = 1, k - 1 do of = { "array", of = of, max = 1 } end
      return { T = { { "x", "array", of = of, max = 1 } } }
    end
    assert.truthy(bitwire.schema(nest(31)))        -- 31 arrays + bool: 32
    raises("nesting deeper than 32 levels", bitwire.schema, nest(32))
  end)

  it("refuses a chain of 99999 types without running out of C stack", function ()
    -- one field each (BW_MAXFIELDS is 100000): the sealer used to recurse
    -- once per type and crash here
    local desc = {}
    for i = 1, 99999 do
      desc[string.format("D%06d", i)] = { i < 99999
        and { "next", string.format("D%06d", i + 1) } or { "v", "bool" } }
    end
    raises("D000001: nesting deeper than 32 levels", bitwire.schema, desc)
  end)
end)


describe("float edge values", function ()
  local s = bitwire.schema {
    Q = { { "x", "float", min = -1, max = 1, res = 0.01 } },
    QC = { { "x", "float", min = -1, max = 1, res = 0.01, clamp = true } },
    F32 = { { "x", "float32" } },
    F64 = { { "x", "float64" } },
    Vec = { { "v", "vector", count = 2, min = 0, max = 1, res = 0.1 } },
  }
  it("refuses NaN, infinities and out-of-range values for float", function ()
    for _, x in ipairs { NAN, INF, -INF, 1.5, -1e300 } do
      raises("out of range [-1", s.encode, s, "Q", { x = x })
    end
    raises("v[2]:", s.encode, s, "Vec", { v = { 0.5, NAN } })
  end)

  it("takes -0.0 for float as 0", function ()
    assert.equal(0, s:decode("Q", s:encode("Q", { x = -0.0 })).x)
  end)

  it("clamps with clamp = true: NaN and -inf to min, +inf to max", function ()
    for _, c in ipairs { { NAN, -1 }, { -INF, -1 }, { INF, 1 }, { 5, 1 }, { -5, -1 } } do
      assert.equal(c[2], s:decode("QC", s:encode("QC", { x = c[1] })).x)
    end
  end)

  it("passes NaN, infinities and -0.0 through float32 and float64", function ()
    for _, c in ipairs { { -0.0, "00000080" }, { INF, "0000807f" }, { -INF, "000080ff" } } do
      assert.equal(c[2], tohex(s:encode("F32", { x = c[1] })))
      assert.equal(f32hex(c[1]), f32hex(s:decode("F32", s:encode("F32", { x = c[1] })).x))
      assert.equal(f64hex(c[1]), tohex(s:encode("F64", { x = c[1] })))
      assert.equal(f64hex(c[1]), f64hex(s:decode("F64", s:encode("F64", { x = c[1] })).x))
    end
    local x = s:decode("F32", s:encode("F32", { x = NAN })).x
    assert.is_true(x ~= x)
    -- float64 keeps a NaN's payload bit for bit
    local payload = string.unpack("<d", fromhex("010000000000f87f"))
    assert.equal("010000000000f87f", tohex(s:encode("F64", { x = payload })))
    assert.equal(f64hex(payload), f64hex(s:decode("F64", s:encode("F64", { x = payload })).x))
  end)

  it("rounds float32 as IEEE-754 does: to FLT_MAX, or past it to infinity", function ()
    -- 3.4028235e38 is FLT_MAX as printed with 8 digits: a double just above
    -- FLT_MAX that rounds to it (it used to become infinity)
    for _, c in ipairs { { 3.4028235e38, "ffff7f7f" }, { -3.4028235e38, "ffff7fff" },
                         { 3.4028235677973366e38, "0000807f" }, { 1e39, "0000807f" },
                         { -1e300, "000080ff" }, { 1e-46, "00000000" } } do
      assert.equal(c[2], tohex(s:encode("F32", { x = c[1] })))
      assert.equal(c[2], tohex(bitwire.writer():float(c[1]):tostring()))
    end
  end)

  it("decodes any float32 and float64 bits, NaNs included", function ()
    for _, h in ipairs { "0000c07f", "0100807f", "ffffffff", "00000080", "01000000" } do
      local v = assert(s:decode("F32", fromhex(h)))
      assert.equal("number", type(v.x))
    end
    for _, h in ipairs { "000000000000f87f", "010000000000f07f", "ffffffffffffffff" } do
      local v = assert(s:decode("F64", fromhex(h)))
      assert.equal(h, f64hex(v.x))
    end
  end)

  it("refuses a quantized index past its maximum", function ()
    -- [-1, 1] at 0.01: 200 steps in 8 bits
    fails("range", "x: quantized 201 out of range [0, 200] (bit 0)",
      s:decode("Q", bytes(function (w) w:bits(201, 8) end)))
  end)
end)


describe("int64 extremes", function ()
  local s = bitwire.schema {
    I = { { "i", "int", min = MINI, max = MAXI } },
    Neg = { { "i", "int", min = MINI, max = -1 } },
    U = { { "u", "uint", bits = 64 } },
    T = { { "t", "tiered", tiers = { 0, 8, 32 }, min = MINI } },
    TH = { { "t", "tiered", tiers = { 1, 3 }, min = MAXI - 9 } },
  }

  it("sends the full int64 range as the unsigned offset from min", function ()
    for _, c in ipairs { { MINI, "0000000000000000" }, { MAXI, "ffffffffffffffff" },
                         { -1, "ffffffffffffff7f" }, { 0, "0000000000000080" } } do
      assert.equal(c[2], tohex(s:encode("I", { i = c[1] })))
      assert.equal(c[1], s:decode("I", fromhex(c[2])).i)
      assert.equal("integer", math.type(s:decode("I", fromhex(c[2])).i))
    end
  end)

  it("keeps [mininteger, -1] in 63 bits", function ()
    assert.equal("ffffffffffffff7f", tohex(s:encode("Neg", { i = -1 })))
    assert.equal(-1, s:decode("Neg", fromhex("ffffffffffffff7f")).i)
    assert.equal(MINI, s:decode("Neg", s:encode("Neg", { i = MINI })).i)
    raises("0 out of range", s.encode, s, "Neg", { i = 0 })
    raises("9223372036854775807 out of range", s.encode, s, "Neg", { i = MAXI })
  end)

  it("sends uint 64 as the bit pattern of any integer", function ()
    for _, c in ipairs { { -1, "ffffffffffffffff" }, { MINI, "0000000000000080" },
                         { MAXI, "ffffffffffffff7f" } } do
      assert.equal(c[2], tohex(s:encode("U", { u = c[1] })))
      assert.equal(c[1], s:decode("U", fromhex(c[2])).u)
    end
  end)

  it("takes tiered integers at mininteger and up to maxinteger", function ()
    assert.equal("01", tohex(s:encode("T", { t = MINI })))
    assert.equal(MINI, s:decode("T", s:encode("T", { t = MINI })).t)
    local top = MINI + 1 + 256 + (1 << 32) - 1
    assert.equal(top, s:decode("T", s:encode("T", { t = top })).t)
    raises("out of range", s.encode, s, "T", { t = top + 1 })
    assert.equal(MAXI, s:decode("TH", s:encode("TH", { t = MAXI })).t)
    assert.equal(MAXI - 9, s:decode("TH", s:encode("TH", { t = MAXI - 9 })).t)
    raises("out of range", s.encode, s, "TH", { t = MAXI - 10 })
    raises("out of range", s.encode, s, "TH", { t = MINI })
  end)

  it("refuses floats and numeric strings for integers", function ()
    for _, x in ipairs { 1.5, 2 ^ 63, -2 ^ 64, NAN } do
      raises("expected an integer", s.encode, s, "I", { i = x })
    end
    raises("expected an integer, got string", s.encode, s, "I", { i = "1" })
  end)
end)


describe("strings that are not UTF-8", function ()
  local s = bitwire.schema {
    S = { { "s", "string", max = 20 } },
    L = { { "l", "array", of = { "string", max = 8 }, max = 2 } },
    B = { { "b", "bytes", max = 20 } },
  }
  local BAD = {
    { "a NUL", "\0" }, { "an interior NUL", "a\0b" }, { "a lone 0xff", "\255" },
    { "an overlong NUL", "\xc0\x80" }, { "an overlong slash", "\xe0\x80\xaf" },
    { "a surrogate", "\xed\xa0\x80" }, { "a code point past U+10FFFF", "\xf4\x90\x80\x80" },
    { "a cut sequence", "\xe2\x82" }, { "a lone continuation", "\x80" },
    { "a five-byte form", "\xf8\x88\x80\x80\x80" },
  }
  for _, c in ipairs(BAD) do
    it("refuses " .. c[1] .. " on encode and gives utf8 on decode", function ()
      raises("s: string with NUL or malformed UTF-8", s.encode, s, "S", { s = c[2] })
      raises("l[2]: string with NUL or malformed UTF-8", s.encode, s, "L", { l = { "ok", c[2] } })
      local b = bytes(function (w) w:bits(#c[2], 5) w:bytes(c[2]) end)
      -- the position is the string's, before the padding up to its bytes
      fails("utf8", "s: string with NUL or malformed UTF-8 (bit 5)", safe(s.decode, s, "S", b))
      -- bytes fields take any bytes
      assert.equal(c[2], s:decode("B", s:encode("B", { b = c[2] })).b)
    end)
  end

  it("takes U+10FFFF, the largest code point", function ()
    assert.equal("\xf4\x8f\xbf\xbf", s:decode("S", s:encode("S", { s = "\xf4\x8f\xbf\xbf" })).s)
  end)
end)


-- a schema with every kind, and a value of it
local rich = bitwire.schema {
  Vec = { { "x", "float", min = -512, max = 512, res = 0.01 },
          { "y", "float", min = -512, max = 512, res = 0.01 } },
  Item = { { "id", "int", min = 0, max = 4095 }, { "pos", "Vec" },
           { "name", "string", max = 16, optional = true } },
  Rich = {
    { "tick", "uint", bits = 20 }, { "big", "int", min = MINI, max = MAXI },
    { "u", "uint", bits = 64 }, { "flag", "bool" }, { "f32", "float32" },
    { "f64", "float64" }, { "color", "enum", values = { "red", "green", "blue" } },
    { "name", "string", max = 20 }, { "blob", "bytes", max = 8 },
    { "tag", "bytes", count = 2 }, { "align" },
    { "items", "array", of = "Item", max = 8 },
    { "pair", "array", of = "Vec", count = 2 },
    { "ints", "array", of = { "int", min = -3, max = 3 }, max = 5 },
    { "opt", "Vec", optional = true },
    { "hp", "int", min = 0, max = 100, default = 100 },
    { "objs", "sparse", of = "Item", max = 100 },
    { "gaps", "sparse", of = "bool", max = 300, encoding = "relative", tiers = "article" },
    { "rot", "quat", bits = 9 }, { "n", "tiered", tiers = { 0, 2, 4 }, min = 1 },
    { "dir", "vector", count = 3, min = -1, max = 1, res = 0.01 },
    { "check" },
  },
}
local rich_value = {
  tick = 77, big = MINI + 5, u = -2, flag = true, f32 = 1.5, f64 = -0.25,
  color = "green", name = "h\xc3\xa9llo", blob = "\0\1\2", tag = "ab",
  items = { { id = 1, pos = { x = 1.5, y = -2 }, name = "a" },
            { id = 4095, pos = { x = 0, y = 0 } } },
  pair = { { x = 1, y = 2 }, { x = -3, y = 4 } }, ints = { -3, 0, 3 },
  opt = { x = 0.5, y = 0.25 },
  objs = { [3] = { id = 3, pos = { x = 1, y = 1 } }, [100] = { id = 9, pos = { x = 0, y = 0 } } },
  gaps = { [1] = true, [7] = false, [300] = true },
  rot = { 0, 0, 0, 1 }, n = 19, dir = { 0, 1, -1 },
}

describe("truncation", function ()
  it("gives truncated for every byte prefix of a packet, never an error", function ()
    local b = rich:encode("Rich", rich_value)
    assert.truthy(rich:decode("Rich", b))
    for n = 0, #b - 1 do
      fails("truncated", nil, safe(rich.decode, rich, "Rich", b:sub(1, n)))
    end
  end)

  it("does the same for messages and deltas", function ()
    local m = rich:encode_message("Rich", rich_value)
    for n = 0, #m - 1 do
      fails("truncated", nil, safe(rich.decode_message, rich, m:sub(1, n)))
    end
    local base = rich:decode("Rich", rich:encode("Rich", rich_value))
    local v = rich:decode("Rich", rich:encode("Rich", rich_value))
    v.tick, v.items[2].pos.x = 78, v.items[1].pos.x
    v.objs[50] = { id = 50, pos = v.objs[3].pos }
    local d = rich:encode("Rich", v, { baseline = base })
    assert.same(v, rich:decode("Rich", d, { baseline = base }))
    for n = 0, #d - 1 do
      fails("truncated", nil, safe(rich.decode, rich, "Rich", d:sub(1, n), { baseline = base }))
    end
  end)

  it("gives truncated or crc for every prefix of a framed packet", function ()
    local p = bitwire.protocol(rich, { id = 0x5eed })
    local pk = p:encode("Rich", rich_value)
    for n = 0, #pk - 1 do
      local name, err, code = safe(p.decode, p, pk:sub(1, n))
      fails(n < 8 and "truncated" or "crc", nil, name, err, code)
    end
  end)
end)


describe("framed packets with one bit flipped", function ()
  for _, opts in ipairs { { id = 1 }, { id = 2, check = false }, { id = 3, deltas = true } } do
    it("are all refused by the CRC (" .. (opts.check == false and "no end check"
        or opts.deltas and "deltas" or "end check") .. ")", function ()
      local p = bitwire.protocol(rich, opts)
      local pk = p:encode("Rich", rich_value)
      assert.equal("Rich", (p:decode(pk)))
      for i = 0, #pk * 8 - 1 do
        local byte, bit = i // 8 + 1, i % 8
        local flipped = pk:sub(1, byte - 1)
          .. string.char(pk:byte(byte) ~ (1 << bit)) .. pk:sub(byte + 1)
        fails("crc", "CRC32 mismatch: corrupt, or another protocol id or definitions (bit 0)",
          safe(p.decode, p, flipped))
      end
    end)
  end
end)


describe("trailing bytes", function ()
  it("are not read by decode: the value is the same", function ()
    local b = rich:encode("Rich", rich_value)
    local want = rich:decode("Rich", b)
    for _, tail in ipairs { "\0", "garbage", ("\255"):rep(100) } do
      assert.same(want, rich:decode("Rich", b .. tail))
    end
  end)

  it("nor are padding bits after the last field", function ()
    local s = bitwire.schema { T = { { "x", "uint", bits = 3 } } }
    assert.same({ x = 5 }, s:decode("T", "\xfd"))
  end)

  it("can be found with s:bits, which gives the exact size", function ()
    local b = rich:encode("Rich", rich_value)
    local v = rich:decode("Rich", b .. "junk")
    assert.equal(#b, (rich:bits("Rich", v) + 7) // 8)
  end)

  it("break a framed packet's CRC", function ()
    local p = bitwire.protocol(rich, { id = 9, check = false })
    fails("crc", nil, p:decode(p:encode("Rich", rich_value) .. "\0"))
  end)
end)


describe("baselines a packet does not match", function ()
  local s = bitwire.schema {
    A = { { "x", "int", min = 0, max = 7 } },
    B = { { "name", "string", max = 8 }, { "y", "int", min = 0, max = 3 },
          { "sp", "sparse", of = "bool", max = 20 } },
  }

  it("gives baseline when the packet's type keeps fields its baseline lacks", function ()
    -- a protocol with deltas: the packet picks the message type, the
    -- receiver's baseline 1 is an A; the delta of a B that changed nothing
    -- used to decode to a B without its fields
    local p = bitwire.protocol(s, { id = 4, deltas = true })
    local vb = { name = "hi", y = 2, sp = {} }
    local pk = p:encode("B", vb, { baseline = vb, baseline_id = 1 })
    assert.same(vb, select(2, p:decode(pk, { baselines = { [1] = vb } })))
    local a = s:decode("A", s:encode("A", { x = 3 }))
    fails("baseline", "name: unchanged, but the baseline has no value",
      p:decode(pk, { baselines = { [1] = a } }))
  end)

  it("gives baseline when a value kept from the baseline does not fit", function ()
    local pk = s:encode("B", { name = "hi", y = 2, sp = {} },
      { baseline = { name = "hi", y = 2, sp = {} } })
    fails("baseline", "y: baseline value does not fit: 9 out of range [0, 3]",
      s:decode("B", pk, { baseline = { name = "hi", y = 9, sp = {} } }))
    -- a sparse baseline with a key past max is none to both sides (WIRE.md):
    -- the array goes whole, and the receiver holding the same reads it so
    local odd = { name = "hi", y = 2, sp = { [1] = true, [99] = true } }
    local v = { name = "hi", y = 2, sp = { [1] = true, [2] = true } }
    local d = s:encode("B", v, { baseline = odd })
    assert.same(v, s:decode("B", d, { baseline = odd }))
  end)

  it("gives range for a frame version no encode can write (2^32 - 1)", function ()
    local v = bitwire.schema { T = { { "x", "bool" }, { "y", "bool", removed = 2 } } }
    local w = bitwire.writer():frame_begin()
    w:bits(0xFFFFFFFF, 32)
    w:bool(true)
    local pk = w:frame_end(11, true):tostring()
    local h = { id = 11, message = false, type = "T", version_bits = 32 }
    fails("range", "version 4294967295 out of range [0, 4294967294] (bit 32)", v:frame_decode(h, pk))
    raises("version out of range", v.frame_encode, v, h, "T", { x = true },
      { version = 0xFFFFFFFF })
  end)
end)


describe("decode arguments", function ()
  local s = bitwire.schema { T = { { "x", "int", min = 0, max = 20 } } }
  local p = bitwire.protocol(s)
  local BAD = {
    { "bytes that are nil", function () return s:decode("T", nil) end, "string expected, got nil" },
    { "bytes that are a table", function () return s:decode("T", {}) end, "string expected, got table" },
    { "an unknown type", function () return s:decode("Nope", "x") end, "unknown type 'Nope'" },
    { "a type that is nil", function () return s:decode(nil, "x") end, "string expected, got nil" },
    { "options that are a number", function () return s:decode("T", "x", 5) end, "table expected, got number" },
    { "into that is not a table", function () return s:decode("T", "x", { into = 5 }) end,
      "'into' must be a table" },
    { "a baseline that is not a table", function () return s:decode("T", "x", { baseline = 5 }) end,
      "'baseline' must be a table" },
    { "a negative version", function () return s:decode("T", "x", { version = -1 }) end,
      "version out of range" },
    { "a version that is not an integer", function () return s:decode("T", "x", { version = 1.5 }) end,
      "bad argument #3 to 'decode' ('version' must be an integer)" },
    { "self that is not a schema", function () return s.decode({}, "T", "x") end,
      "bitwire.Schema expected, got table" },
    { "a message that is nil", function () return s:decode_message(nil) end, "string expected, got nil" },
    { "a frame id that is a string", function () return s:frame_decode({ id = "id" }, "12345678") end,
      "bad argument #1 to 'frame_decode' ('id' must be an integer)" },
    { "a frame header that is not a table", function ()
        return s:frame_decode(1, "12345678") end,
      "bad argument #1 to 'frame_decode' (table expected, got number)" },
    { "frame version_bits past 32", function ()
        return s:frame_decode({ version_bits = 33 }, "12345678") end,
      "'version_bits' must be 0..32" },
    { "a packet that is not a string", function () return p:decode(5) end,
      "decode expects a string, got number" },
  }
  for _, c in ipairs(BAD) do
    it("raise for " .. c[1], function () raises(c[3], c[2]) end)
  end

  it("never raise for any bytes", function ()
    local rand = lcg(0xbad)
    local pr = bitwire.protocol(rich, { deltas = true })
    local base = rich:decode("Rich", rich:encode("Rich", rich_value))
    local good = rich:encode("Rich", rich_value)
    for i = 1, 1500 do
      local t = {}
      if i % 2 == 0 then          -- a valid packet with a few bytes changed
        for k = 1, #good do t[k] = good:sub(k, k) end
        for _ = 1, 1 + rand(3) do
          local k = 1 + rand(#good)
          t[k] = string.char(rand(256))
        end
      else
        for k = 1, rand(64) do t[k] = string.char(rand(256)) end
      end
      local b = table.concat(t)
      for _, r in ipairs {
        table.pack(safe(rich.decode, rich, "Rich", b)),
        table.pack(safe(rich.decode, rich, "Item", b)),
        table.pack(safe(rich.decode, rich, "Rich", b, { baseline = base })),
        table.pack(safe(rich.decode, rich, "Rich", b, { into = { items = { 1 } } })),
        table.pack(safe(rich.decode_message, rich, b)),
        table.pack(safe(pr.decode, pr, b, { baselines = { [0] = base } })),
      } do
        if r[1] == nil then
          assert.is_string(r[2])
          assert(KNOWN_CODES[r[3]], "unknown code " .. tostring(r[3]))
        end
      end
    end
  end)
end)

describe("a call on a schema made during another", function ()
  -- a hook (or a finalizer an allocation runs) calls the schema while a
  -- delta decode is using its buffers: that call raises, and the decode
  -- goes on as ever. The decode checks its hand-built baseline's kept
  -- values by calling the encoder, which runs the call hook.
  it("raises, and the call it interrupted goes on unharmed", function ()
    local s = bitwire.schema {
      E = { { "x", "int", min = 0, max = 1000 }, { "name", "string", max = 64 } },
      T = { { "a", "array", of = "E", max = 5000 }, { "n", "int", min = 0, max = 9 } },
    }
    local function mk (n, k)
      local a = {}
      for i = 1, n do a[i] = { x = (i * k) % 1000, name = "e" .. (i * k) } end
      return { a = a, n = k }
    end
    local b1 = mk(100, 1)  -- built by hand: its kept values are checked
    local b2 = s:decode("T", s:encode("T", mk(1000, 3)))  -- a larger tape
    local v3 = mk(1000, 7)
    local v = mk(100, 1)
    v.n = 2
    local d = s:encode("T", v, { baseline = b1 })
    local want = s:encode("T", v)
    local inside, refused, ran = false, {}, 0
    debug.sethook(function ()
      if not inside then return end
      inside = false
      local ok, err = pcall(s.encode, s, "T", v3, { baseline = b2 })
      if ok then ran = ran + 1 else refused[#refused + 1] = err end
      inside = true
    end, "c")
    local got
    for _ = 1, 3 do
      inside = true
      got = s:decode("T", d, { baseline = b1 })
      inside = false
      assert.equal(want, s:encode("T", got))
    end
    debug.sethook()
    assert.is_true(#refused > 0)
    for _, e in ipairs(refused) do
      assert.truthy(e:find("schema in use: called during another call on it", 1, true), e)
    end
    -- and the schema serves calls again once the first is over
    assert.equal(want, s:encode("T", assert(s:decode("T", d, { baseline = b1 }))))
  end)

  it("serves calls again after a call raised in a coroutine", function ()
    -- a coroutine that raises is dead and closes no to-be-closed slot
    local s = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
    local release = getmetatable(s).__gc
    local co = coroutine.create(function () return s:encode("T", { x = 10 }) end)
    local ok, err = coroutine.resume(co)
    assert.is_false(ok)
    assert.matches("out of range", err)
    assert.equal("dead", coroutine.status(co))
    assert.equal(3, s:decode("T", s:encode("T", { x = 3 })).x)
    -- closing the dead coroutine later ends nothing of a call in progress:
    -- a delta against a hand-built baseline calls the encoder, which runs
    -- the call hook
    local d = s:encode("T", { x = 4 }, { baseline = { x = 3 } })
    local inner
    debug.sethook(function ()
      if inner or debug.getinfo(2, "f").func == s.decode then return end
      coroutine.close(co)  -- false, its error: it died raising
      inner = { pcall(s.encode, s, "T", { x = 1 }) }
    end, "c")
    local got = s:decode("T", d, { baseline = { x = 3 } })
    debug.sethook()
    assert.equal(4, got.x)
    assert.is_false(inner[1])
    assert.matches("schema in use", inner[2])
    -- and a schema left so is released, not kept as in use
    co = coroutine.create(function () return s:encode("T", { x = -1 }) end)
    assert.is_false((coroutine.resume(co)))
    assert.is_true((pcall(release, s)))
  end)

  it("lists a long sparse array's keys within bounds while finalizers add keys", function ()
    -- the list of keys is made after they are counted: a finalizer its
    -- allocation runs may add keys, which were written past the list
    fresh([=[
local bitwire = require "bitwire"
local s = bitwire.schema { T = { { "sp", "sparse", of = "bool", max = 100000 } } }
local v, during, inside, nextkey = { sp = {} }, 0, false, 0
collectgarbage("incremental", 10, 400)
for _ = 1, 300 do
  v.sp = {}
  for i = 1, 8 do v.sp[i * 7] = true end
  for _ = 1, 20 do
    setmetatable({}, { __gc = function ()
      if inside then during = during + 1 end
      for _ = 1, 100 do
        nextkey = nextkey % 99000 + 1
        v.sp[nextkey] = true
      end
    end })
  end
  inside = true
  local packet = s:encode("T", v)
  inside = false
  assert(s:decode("T", packet))
end
io.write("during ", during, "\n")
]=])
  end)

  it("keeps a description's text when a finalizer releases the schema", function ()
    -- core._setdesc converts a number to a string, which runs finalizers:
    -- one releasing the schema by hand left it reading no program
    fresh([=[
local core = require "bitwire.core"
local during, inside = 0, false
collectgarbage("incremental", 10, 400)
for i = 1, 2000 do
  local s = core.compile { T = { { "x", "bool" } } }
  local release = getmetatable(s).__gc
  for _ = 1, 20 do
    setmetatable({}, { __gc = function ()
      if inside then during = during + 1; pcall(release, s) end
    end })
  end
  inside = true
  local ok, e = pcall(core._setdesc, s, 2^53 + i)
  inside = false
  assert(ok or e:match("released"), e)
end
io.write("during ", during, "\n")
]=])
  end)

  it("takes the schema before its arguments are converted or its options read", function ()
    -- a number converted to a string allocates (finalizers run), and an
    -- option's __index runs code: a release by hand there is refused
    local s = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
    local release = getmetatable(s).__gc
    local blob, message = s:blob("T", { x = 3 }), s:encode_message("T", { x = 3 })
    local function opts (k)
      return setmetatable({}, { __index = function (_, key)
        if key == k then assert.matches("schema in use", select(2, pcall(release, s))) end
      end })
    end
    local calls = {
      { "encode", "T", { x = 3 }, opts("version") },
      { "bits", "T", { x = 3 }, opts("version") },
      { "encode_message", "T", { x = 3 }, opts("version") },
      { "decode", "T", "\3", opts("version") },
      { "decode_message", message, opts("version") },
      { "blob", "T", { x = 3 }, opts("version") },
      { "unblob", "T", blob, opts("max_values") },
    }
    for _, call in ipairs(calls) do
      assert.is_true((pcall(s[call[1]], s, table.unpack(call, 2))), call[1])
    end
    -- a conversion's finalizer: tried until one ran during a decode
    local ran = false
    for i = 1, 2000 do
      if ran then break end
      collectgarbage("stop")
      for _ = 1, 20 do
        setmetatable({}, { __gc = function ()
          if not ran then ran = not pcall(release, s) end
        end })
      end
      collectgarbage("restart")
      s:decode("T", 12345 + i)
    end
    assert.is_true(ran)
    assert.equal(3, s:decode("T", s:encode("T", { x = 3 })).x)
  end)

  it("holds a baseline's tape while a delta decode reads it", function ()
    -- a finalizer that runs inside the decode calls another schema, which
    -- gives the baseline a tape of its own: the old one, only pointed at,
    -- was collected under the walk (heap-use-after-free under ASan)
    local desc = {
      E = { { "id", "int", min = 0, max = 4095 }, { "x", "float", min = -100, max = 100, res = 0.01 } },
      S = { { "a", "array", of = "E", max = 4 }, { "big", "bytes", max = 2000000 },
            { "big2", "bytes", max = 2000000 }, { "c", "array", of = "E", max = 4 },
            { "z", "int", min = 0, max = 1000 } },
    }
    local s, other, sender = bitwire.schema(desc), bitwire.schema(desc), bitwire.schema(desc)
    local function mk (k, big)
      local a, c = {}, {}
      for i = 1, 3 do
        a[i] = { id = i * k % 4096, x = i * k % 200 - 100 }
        c[i] = { id = (i * k + 7) % 4096, x = (i * k + 3) % 200 - 100 }
      end
      return { a = a, c = c, big = big, big2 = big, z = k % 1000 }
    end
    finally(function () collectgarbage("incremental", 200, 100) end)
    local during = 0
    for round = 1, 150 do
      collectgarbage("incremental", 20 + round % 20 * 10, 100 + round % 7 * 150)
      local v0, v1 = mk(round, "x"), mk(round, "x")
      v1.z = (round + 1) % 1000
      local b0 = s:decode("S", s:encode("S", v0))
      local b = assert(s:decode("S", sender:encode("S", v1, { baseline = v0 }), { baseline = b0 }))
      local v = mk(round, string.rep("y", 200000 + round))
      local d = sender:encode("S", v, { baseline = v1 })
      local inside = false
      for _ = 1, 30 do
        setmetatable({}, { __gc = function ()
          if not inside then return end
          during = during + 1
          b.big = string.rep("z", 5000 + round)  -- a tape of another shape
          other:encode("S", mk(round + 2, "q"), { baseline = b })
        end })
      end
      inside = true
      local got = assert(s:decode("S", d, { baseline = b }))
      inside = false
      assert.equal(s:encode("S", v), s:encode("S", got))
    end
    assert.is_true(during > 0)
  end)

  it("keeps a frame decode's own schema while the packet's tag names another", function ()
    -- the call puts the tagged schema at index 1: a temporary it was called
    -- on was collected under the call, and its guard written when freed
    local o = bitwire.schema { T = { { "x", "int", min = 0, max = 9 }, { "s", "string", max = 100000 } } }
    local packet = o:frame_encode({ id = 1, tagged = true }, "T", { x = 3, s = string.rep("a", 50000) })
    finally(function () collectgarbage("incremental", 200, 100) end)
    collectgarbage("incremental", 10, 1000)
    for _ = 1, 50 do
      local hdr = { id = 1, tagged = true, schemas = { [o:tag()] = o } }
      local name, v = bitwire.schema({ A = { { "y", "int", min = 0, max = 1 } } })
        :frame_decode(hdr, packet)
      assert.equal("T", name)
      assert.equal(3, v.x)
    end
  end)

  it("keeps a schema released by hand from under any call that reads it", function ()
    -- a frame's header table runs metamethods before the call reads the
    -- schema: releasing it there raises, and the call goes on
    for _, op in ipairs { "frame_decode", "frame_encode" } do
      local s = bitwire.schema { T = { { "x", "int", min = 0, max = 9 } } }
      local release = getmetatable(s).__gc
      local packet = bitwire.protocol(s, { id = 1 }):encode("T", { x = 3 })
      local tried
      local hdr = setmetatable({ id = 1, check = true, fingerprint = true }, {
        __index = function (_, k) if k == "deltas" then tried = { pcall(release, s) } end end })
      local args = op == "frame_decode" and { hdr, packet } or { hdr, "T", { x = 3 } }
      assert.is_true((pcall(s[op], s, table.unpack(args))))
      assert.is_false(tried[1], op)
      assert.matches("schema in use", tried[2])
      assert.equal(3, select(2, bitwire.protocol(s, { id = 1 }):decode(packet)).x)
    end
    -- methods that allocate as they read the schema, a finalizer releasing
    -- it by hand during them: refused there, taken between calls
    local T, zero = {}, {}
    for i = 1, 60 do
      T[i] = { "f" .. i, "int", min = 0, max = i }
      zero["f" .. i] = 0
    end
    local args = { program = {}, types = {}, blob_layout = {}, blob = { "A", zero } }
    for _, method in ipairs { "program", "types", "blob_layout", "blob", "unblob", "blobview" } do
      local s = bitwire.schema { A = T, B = T }
      local blob = s:blob("A", zero)
      args.unblob, args.blobview = { "A", blob }, { "A", blob }
      local release, ran, done = getmetatable(s).__gc, 0, false
      collectgarbage("stop")
      for _ = 1, 500 do
        setmetatable({}, { __gc = function ()
          ran = ran + 1
          if done then return end
          local ok, err = pcall(release, s)
          if ok then done = true else assert.matches("schema in use", err) end
        end })
      end
      collectgarbage("restart")
      local calls = 0
      while not done and ran < 500 and calls < 5000 do
        calls = calls + 1
        local ok, err = pcall(s[method], s, table.unpack(args[method]))
        if not ok then assert.matches("schema has been released", err) end
      end
      if not done then assert.is_true((pcall(release, s)), method) end
      assert.matches("schema has been released",
        select(2, pcall(s[method], s, table.unpack(args[method]))))
    end
  end)
end)
