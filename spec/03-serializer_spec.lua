-- bitwire.serializer: one serialize function for encode, decode and measure.
local helpers = require "spec.helpers"
local tohex, fromhex = helpers.tohex, helpers.fromhex

-- a Lua pattern matching 's' literally
local function lit (s)
  return (tostring(s):gsub("%p", "%%%0"))
end

local bitwire = require "bitwire"

-- {======= the seeds' packets ("Serialization Strategies") =======

local MAX_ELEMENTS = 10

local PacketA = bitwire.serializer(function (s, p)
  s:bits(p, "x", 32)
  s:bits(p, "y", 32)
  s:bits(p, "z", 32)
end)

local PacketB = bitwire.serializer(function (s, p)
  s:array(p, "elements", MAX_ELEMENTS, function (s2, t, i)
    s2:bits(t, i, 32)
  end)
end)

local PacketC = bitwire.serializer(function (s, p)
  s:bool(p, "x")
  s:int(p, "y", -32768, 32767)
  s:int(p, "z", -0x80000000, 0x7fffffff)
end)

local function vector (s, v)
  s:compressed_float(v, "x", -512, 512, 0.01)
  s:compressed_float(v, "y", -512, 512, 0.01)
  s:compressed_float(v, "z", -512, 512, 0.01)
end

local function quaternion (s, q)
  s:float(q, "x")
  s:float(q, "y")
  s:float(q, "z")
  s:float(q, "w")
end

local function is_zero (v)
  return v.x == 0 and v.y == 0 and v.z == 0
end

local RigidBody = bitwire.serializer(function (s, p)
  s:object(p, "position", vector)
  s:object(p, "orientation", quaternion)
  local at_rest = s:bool(s.writing and is_zero(p.linear_velocity)
                                   and is_zero(p.angular_velocity))
  if not at_rest then
    s:object(p, "linear_velocity", vector)
    s:object(p, "angular_velocity", vector)
  elseif s.reading then
    p.linear_velocity = { x = 0, y = 0, z = 0 }
    p.angular_velocity = { x = 0, y = 0, z = 0 }
  end
end)

-- }==============================================================

local function body (lv, av)
  return {
    position = { x = 1.25, y = -3.5, z = 511 },
    orientation = { x = 0, y = 0, z = 0.5, w = -0.75 },
    linear_velocity = lv, angular_velocity = av,
  }
end

describe("bitwire.serializer", function ()
  it("returns an object with encode, decode and measure", function ()
    local ser = bitwire.serializer(function () end)
    assert.is_function(ser.encode)
    assert.is_function(ser.decode)
    assert.is_function(ser.measure)
    assert.equal("", ser:encode({}))
    assert.same({}, ser:decode(""))
    assert.equal(0, ser:measure({}))
  end)

  it("raises on a bad function or size limit", function ()
    assert.has_error(function () bitwire.serializer() end)
    assert.has_error(function () bitwire.serializer({}) end)
    assert.has_error(function () bitwire.serializer(print, "x") end)
    assert.has_error(function () bitwire.serializer(print, -1) end)
  end)

  it("gives the stream's mode in s.reading, s.writing, s.measuring", function ()
    local seen = {}
    local ser = bitwire.serializer(function (s)
      seen[#seen + 1] = { s.reading, s.writing, s.measuring }
    end)
    ser:encode({})
    ser:decode("")
    ser:measure({})
    assert.same({ { false, true, false }, { true, false, false },
                  { false, true, true } }, seen)
  end)
end)

describe("PacketA", function ()
  it("round-trips three 32-bit fields", function ()
    local v = { x = 1, y = 0xdeadbeef, z = 0xffffffff }
    local bytes = PacketA:encode(v)
    assert.equal("01000000efbeaddeffffffff", tohex(bytes))
    assert.same(v, PacketA:decode(bytes))
  end)
end)

describe("PacketB", function ()
  it("round-trips 0 to MAX_ELEMENTS elements", function ()
    for n = 0, MAX_ELEMENTS do
      local v = { elements = {} }
      for i = 1, n do v.elements[i] = i * 0x01010101 end
      local bytes = PacketB:encode(v)
      assert.equal(4 + 32 * n, PacketB:measure(v))
      assert.same(v, PacketB:decode(bytes))
    end
  end)

  it("raises on too many elements, naming the array", function ()
    local v = { elements = {} }
    for i = 1, MAX_ELEMENTS + 1 do v.elements[i] = i end
    local ok, err = pcall(PacketB.encode, PacketB, v)
    assert.is_false(ok)
    assert.matches("elements: int: 11 out of range %[0, 10%] %(bit 0%)$", err)
  end)

  it("fails on a count above MAX_ELEMENTS, naming the array", function ()
    local v, err, code = PacketB:decode("\15")
    assert.is_nil(v)
    assert.equal("elements: int: value out of range (bit 0)", err)
    assert.equal("range", code)
  end)
end)

describe("PacketC", function ()
  it("round-trips a bool and signed ints", function ()
    for _, v in ipairs {
      { x = true, y = -32768, z = -0x80000000 },
      { x = false, y = 32767, z = 0x7fffffff },
      { x = true, y = 0, z = -1 },
    } do
      local bytes = PacketC:encode(v)
      assert.equal(1 + 16 + 32, PacketC:measure(v))
      assert.equal(7, #bytes)
      assert.same(v, PacketC:decode(bytes))
    end
  end)

  it("writes what the stream API writes, bit for bit", function ()
    local v = { x = true, y = -2, z = 123456 }
    local w = bitwire.writer():bool(true):int(-2, -32768, 32767)
      :int(123456, -0x80000000, 0x7fffffff)
    assert.equal(w:tostring(), PacketC:encode(v))
  end)
end)

describe("RigidBody", function ()
  it("sends one bool and no velocities at rest, zeroing them on read", function ()
    local zero = { x = 0, y = 0, z = 0 }
    local v = body(zero, zero)
    local bytes = RigidBody:encode(v)
    assert.equal(3 * 17 + 4 * 32 + 1, RigidBody:measure(v))
    local got = assert(RigidBody:decode(bytes))
    assert.same(zero, got.linear_velocity)
    assert.same(zero, got.angular_velocity)
    assert.same(v.orientation, got.orientation)
    assert.same({ x = 1.25, y = -3.5, z = 511 }, got.position)
  end)

  it("sends the velocities when moving, quantized to the resolution", function ()
    local v = body({ x = 10.004, y = 0, z = -7.5 }, { x = 0, y = 0.123, z = 0 })
    local bytes = RigidBody:encode(v)
    assert.equal(3 * 17 * 3 + 4 * 32 + 1, RigidBody:measure(v))
    local got = assert(RigidBody:decode(bytes))
    for _, k in ipairs { "linear_velocity", "angular_velocity" } do
      for _, c in ipairs { "x", "y", "z" } do
        assert.is_true(math.abs(got[k][c] - v[k][c]) <= 0.01, k .. "." .. c)
      end
    end
  end)

  it("names the nested field of a missing value", function ()
    local v = body({ x = 1, y = 0, z = 0 }, { x = 0, y = 0, z = 0 })
    v.orientation.w = nil
    local ok, err = pcall(RigidBody.encode, RigidBody, v)
    assert.is_false(ok)
    assert.matches("orientation%.w: float: bad argument %(number expected, got nil%)$", err)
  end)

  it("fails on truncated bytes with the nested field's path", function ()
    local v = body({ x = 1, y = 2, z = 3 }, { x = 0, y = 0, z = 0 })
    local bytes = RigidBody:encode(v)
    local got, err, code = RigidBody:decode(bytes:sub(1, 30))
    assert.is_nil(got)
    assert.equal("angular_velocity.x: compressed_float: truncated input (bit 231)", err)
    assert.equal("truncated", code)
  end)
end)

describe("serializer:encode", function ()
  it("writes every primitive as the stream API does (sample mixed_packet)", function ()
    local ser = bitwire.serializer(function (s, p)
      s:bits(p, "tag", 4)
      s:int(p, "hp", -100, 100)
      s:bool(p, "alive")
      s:float(p, "pi")
      s:compressed_float(p, "speed", 0, 10, 0.01)
      s:double(p, "third")
      s:bits(p, "id", 64)
      s:int_relative(p, "index", 100)
      s:align()
      s:bytes(p, "blob", 7)
      s:string(p, "name", 15)
      s:bool(p, "dead")
      s:int(p, "big", -1099511627776, 0x10000000000)
    end)
    local v = {
      tag = 13, hp = -37, alive = true, pi = 0x1.921fb4p+1, speed = 5.0,
      third = 0x1.5555555555555p-2, id = 0x123456789abcdef0, index = 2100,
      blob = "\222\173\190\239\202\254\1", name = "golden", dead = false,
      big = -1,
    }
    local mixed
    for _, case in ipairs(helpers.samples()) do
      if case.name == "mixed_packet" then mixed = case end
    end
    local bytes = ser:encode(v)
    assert.equal(mixed.hex, tohex(bytes))
    assert.equal(mixed.bits, ser:measure(v))
    assert.same(v, ser:decode(fromhex(mixed.hex)))
  end)

  it("takes values in value form and returns them", function ()
    local got = {}
    local ser = bitwire.serializer(function (s, p)
      got[#got + 1] = s:int(s.writing and p.n * 2 or nil, 0, 100)
      got[#got + 1] = s:bits(s.writing and 5 or nil, 3)
      got[#got + 1] = s:int_relative(10, s.writing and 17 or nil)
      got[#got + 1] = s:bytes(s.writing and "ab" or nil, 2)
      got[#got + 1] = s:string(s.writing and "hé" or nil, 7)
      s:check()
    end)
    local bytes = ser:encode({ n = 21 })
    assert.same({ 42, 5, 17, "ab", "hé" }, got)
    got = {}
    assert.same({}, ser:decode(bytes))
    assert.same({ 42, 5, 17, "ab", "hé" }, got)
  end)

  it("raises on a value that does not fit, with its path and bit", function ()
    local Entity = bitwire.serializer(function (s, e)
      s:int(e, "health", 0, 100)
    end)
    local Snapshot = bitwire.serializer(function (s, p)
      s:bits(p, "tick", 12)
      s:array(p, "entities", 8, function (s2, t, i) s2:object(t, i, Entity) end)
    end)
    local v = { tick = 1, entities = { { health = 5 }, { health = 6 },
                                        { health = 117 } } }
    local ok, err = pcall(function () local b = Snapshot:encode(v); return b end)
    assert.is_false(ok)
    assert.matches(lit("entities[3].health: int: 117 out of range [0, 100] (bit 30)")
                   .. "$", err)
    -- the position is the caller's, not the library's
    assert.matches("^[^:]*03%-serializer_spec%.lua:%d+: entities", err)
  end)

  it("raises on a bytes field of the wrong length", function ()
    local ser = bitwire.serializer(function (s, p) s:bytes(p, "b", 4) end)
    local ok, err = pcall(ser.encode, ser, { b = "abc" })
    assert.is_false(ok)
    assert.matches("b: bytes: 3 bytes, expected 4 %(bit 0%)$", err)
    -- a number goes out as its string: its length is checked too
    ok, err = pcall(ser.encode, ser, { b = 12 })
    assert.is_false(ok)
    assert.matches("b: bytes: 2 bytes, expected 4 %(bit 0%)$", err)
    assert.equal("1234", ser:encode({ b = 1234 }))
  end)

  it("raises when a nested table is missing", function ()
    local ok, err = pcall(RigidBody.encode, RigidBody, { orientation = {} })
    assert.is_false(ok)
    assert.matches("position: table expected, got nil$", err)
  end)

  it("raises past the size limit given to bitwire.serializer", function ()
    local ser = bitwire.serializer(function (s, p) s:bytes(p, "b") end, 4)
    assert.equal("abcd", ser:encode({ b = "abcd" }))
    local ok, err = pcall(ser.encode, ser, { b = "abcde" })
    assert.is_false(ok)
    assert.matches("b: bytes: writer size limit of 4 bytes reached %(bit 0%)$", err)
  end)

  it("raises on a value that is not a table", function ()
    assert.has_error(function () PacketA:encode(1) end,
                     "bad argument #1 to 'encode' (table expected, got number)")
    assert.has_error(function () PacketA:measure() end)
  end)
end)

describe("serializer:measure", function ()
  local cases = {
    { PacketA, { x = 1, y = 2, z = 3 } },
    { PacketB, { elements = { 1, 2, 3 } } },
    { PacketC, { x = false, y = 1, z = 2 } },
    { RigidBody, body({ x = 0, y = 0, z = 0 }, { x = 0, y = 0, z = 0 }) },
    { RigidBody, body({ x = 1, y = 0, z = 0 }, { x = 0, y = 0, z = 0 }) },
  }
  for i, c in ipairs(cases) do
    it("counts exactly the bits encode writes (case " .. i .. ")", function ()
      local ser, v = c[1], c[2]
      local bits = ser:measure(v)
      assert.equal(math.ceil(bits / 8), #ser:encode(v))
      -- decoding reads back exactly 'bits' bits
      local read
      local probe = bitwire.serializer(function (s, p)
        ser._fn(s, p)
        read = s:bits_processed()
      end)
      assert.is_not_nil(probe:decode(ser:encode(v)))
      assert.equal(bits, read)
    end)
  end

  it("counts alignment as encode does", function ()
    local ser = bitwire.serializer(function (s, p)
      s:bits(p, "a", 3)
      s:align()
      s:check()
      s:string(p, "s", 255)
      s:bits_processed()
    end)
    local v = { a = 1, s = "xyz" }
    assert.equal(8 + 32 + 8 + 24, ser:measure(v))
    assert.equal(9, #ser:encode(v))
  end)

  it("raises on a value that does not fit, as encode does", function ()
    assert.has_error(function () PacketC:measure({ x = true, y = 1e6, z = 0 }) end)
  end)
end)

describe("serializer:decode", function ()
  it("returns a fresh table each time", function ()
    local bytes = PacketA:encode({ x = 1, y = 2, z = 3 })
    local a, b = PacketA:decode(bytes), PacketA:decode(bytes)
    assert.same(a, b)
    assert.is_false(rawequal(a, b))
  end)

  it("returns exactly nil, message, code and no partial value", function ()
    local n = select("#", PacketA:decode("\1\0\0\0\2\0\0\0\3"))
    assert.equal(3, n)
    local v, err, code = PacketA:decode("\1\0\0\0\2\0\0\0\3")
    assert.is_nil(v)
    assert.equal("z: bits: truncated input (bit 64)", err)
    assert.equal("truncated", code)
  end)

  it("stops at the first failure", function ()
    local after = false
    local ser = bitwire.serializer(function (s, p)
      s:int(p, "a", 0, 100)
      after = true
    end)
    local v, err, code = ser:decode("\127")
    assert.is_nil(v)
    assert.equal("a: int: value out of range (bit 0)", err)
    assert.equal("range", code)
    assert.is_false(after)
  end)

  local failures = {
    { "align", function (s) s:bits(nil, 1); s:align() end, "\3",
      "align: non-zero padding bits (bit 1)", "align" },
    { "check", function (s) s:check(7) end, "\1\2\3\4",
      "check: serialization check failed (bit 0)", "check" },
    { "string", function (s, p) s:string(p, "name", 15) end, "\2\195\40",
      "name: string: string with NUL or malformed UTF-8 (bit 4)", "utf8" },
    { "int_relative", function (s, p) s:int_relative(p, "i", 0x7fffffff) end,
      "\1", "i: int_relative: value out of range (bit 0)", "range" },
  }
  for _, c in ipairs(failures) do
    it("fails with code " .. c[5] .. " on a bad " .. c[1], function ()
      local v, err, code = bitwire.serializer(c[2]):decode(c[3])
      assert.is_nil(v)
      assert.equal(c[4], err)
      assert.equal(c[5], code)
    end)
  end

  it("fails even when the function catches the failure", function ()
    local ser = bitwire.serializer(function (s, p)
      pcall(s.int, s, p, "a", 0, 100)
      pcall(s.bits, s, p, "b", 8)
      p.c = "partial"
    end)
    local v, err, code = ser:decode("\127")
    assert.is_nil(v)
    assert.equal("a: int: value out of range (bit 0)", err)
    assert.equal("range", code)
  end)

  it("never raises on random bytes", function ()
    math.randomseed(42)
    for _ = 1, 500 do
      local t = {}
      for i = 1, math.random(0, 40) do t[i] = string.char(math.random(0, 255)) end
      local bytes = table.concat(t)
      for _, ser in ipairs { PacketA, PacketB, PacketC, RigidBody } do
        local v, err, code = ser:decode(bytes)
        assert.is_true(v ~= nil or (type(err) == "string" and type(code) == "string"))
      end
    end
  end)

  it("raises on bytes that are not a string", function ()
    assert.has_error(function () PacketA:decode({}) end,
                     "bad argument #1 to 'decode' (string expected, got table)")
  end)
end)

describe("errors of the serialize function", function ()
  local Boom = bitwire.serializer(function (s, p)
    s:bits(p, "x", 8)
    if p.x == 7 or s.reading then error("boom") end
  end)

  it("propagate from encode and measure", function ()
    assert.has_error(function () Boom:encode({ x = 7 }) end)
    local ok, err = pcall(Boom.encode, Boom, { x = 7 })
    assert.is_false(ok)
    assert.matches("03%-serializer_spec%.lua:%d+: boom$", err)
    ok, err = pcall(Boom.measure, Boom, { x = 7 })
    assert.is_false(ok)
    assert.matches(": boom$", err)
  end)

  it("propagate from decode when the bytes are good", function ()
    local ok, err = pcall(Boom.decode, Boom, "\1")
    assert.is_false(ok)
    assert.matches(": boom$", err)
  end)

  it("keep their identity when they are not strings", function ()
    local obj = {}
    local ser = bitwire.serializer(function () error(obj) end)
    local ok, err = pcall(ser.decode, ser, "")
    assert.is_false(ok)
    assert.equal(obj, err)
    ok, err = pcall(ser.encode, ser, {})
    assert.is_false(ok)
    assert.equal(obj, err)
  end)

  it("of a bad argument to a primitive raise from decode too", function ()
    local ser = bitwire.serializer(function (s, p) s:int(p, "a", 5, 0) end)
    local ok, err = pcall(ser.decode, ser, "\0")
    assert.is_false(ok)
    assert.matches("a: int: bad argument %(min > max%)$", err)
  end)
end)
