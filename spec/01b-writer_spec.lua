-- bitwire.writer and its methods: the bits each one writes, its limits and
-- its errors.
local helpers = require "spec.helpers"
local tohex = helpers.tohex

-- a Lua pattern matching 's' literally
local function lit (s)
  return (tostring(s):gsub("%p", "%%%0"))
end

describe("bitwire.writer", function ()
  local bitwire = require "bitwire"

  it("starts empty", function ()
    local w = bitwire.writer()
    assert.equal(0, w:bits_written())
    assert.equal("", w:tostring())
  end)

  it("grows up to 1 MiB by default", function ()
    local w = bitwire.writer()
    local mib = string.rep("\171", 1 << 20)
    w:bytes(mib)
    assert.equal(mib, w:tostring())
    local ok, err = pcall(w.bool, w, true)
    assert.is_false(ok)
    assert.matches("bool: writer size limit of 1048576 bytes reached %(bit 8388608%)$", err)
  end)

  it("takes a size limit in bytes", function ()
    local w = bitwire.writer(3)
    w:bits(0xffffff, 24)
    local ok, err = pcall(w.bits, w, 1, 1)
    assert.is_false(ok)
    assert.matches("bits: writer size limit of 3 bytes reached %(bit 24%)$", err)
    assert.equal("ffffff", tohex(w:tostring()))
  end)

  it("with limit 0 refuses every bit but writes zero-width fields", function ()
    local w = bitwire.writer(0)
    w:int(7, 7, 7):bits(0, 0):align()
    assert.equal(0, w:bits_written())
    assert.has_error(function () w:bool(false) end)
  end)

  it("leaves itself unchanged when a write fails", function ()
    local w = bitwire.writer(2)
    w:bits(5, 3)
    assert.has_error(function () w:bytes("abc") end)      -- limit, after align
    assert.has_error(function () w:int(1000, 0, 100) end) -- range
    assert.has_error(function () w:string("abcdef", 3) end)
    assert.equal(3, w:bits_written())
    w:bits(1, 5)
    assert.equal("0d", tohex(w:tostring()))
  end)

  it("can go on writing after tostring", function ()
    local w = bitwire.writer()
    w:bits(1, 4)
    assert.equal("01", tohex(w:tostring()))
    w:bits(0xf, 4):bits(0xabcdef, 24)
    assert.equal("f1efcdab", tohex(w:tostring()))
  end)

  it("frees its buffer when collected", function ()
    for _ = 1, 200 do bitwire.writer():bytes(string.rep("x", 5000)) end
    collectgarbage()
    collectgarbage()
  end)
end)

describe("writer:bits", function ()
  local bitwire = require "bitwire"

  it("writes LSB first and returns the writer", function ()
    local w = bitwire.writer()
    assert.equal(w, w:bits(1, 1))
    w:bits(2, 2):bits(0x1f, 5)
    assert.equal("fd", tohex(w:tostring()))
  end)

  local patterns = {
    {math.mininteger, "0000000000000080"},
    {math.maxinteger, "ffffffffffffff7f"},
    {-1, "ffffffffffffffff"},
    {0, "0000000000000000"},
    {0x0123456789abcdef, "efcdab8967452301"},
  }
  for _, c in ipairs(patterns) do
    it("takes " .. c[1] .. " as a 64-bit pattern", function ()
      local w = bitwire.writer():bits(c[1], 64)
      assert.equal(c[2], tohex(w:tostring()))
      assert.equal(c[1], bitwire.reader(w:tostring()):bits(64))
    end)
  end

  it("writes 64-bit patterns at every bit offset", function ()
    for off = 0, 7 do
      local w = bitwire.writer():bits(0, off):bits(math.mininteger, 64)
        :bits(-1, 64):bits(0x5a, 7)
      local r = bitwire.reader(w:tostring())
      assert.equal(0, r:bits(off))
      assert.equal(math.mininteger, r:bits(64))
      assert.equal(-1, r:bits(64))
      assert.equal(0x5a, r:bits(7))
    end
  end)

  it("writes nothing for n = 0 and value 0", function ()
    assert.equal(0, bitwire.writer():bits(0, 0):bits_written())
  end)

  local misfits = { {2, 1}, {256, 8}, {-1, 8}, {1 << 62, 62}, {-1, 63},
                    {math.mininteger, 63}, {1, 0} }
  for _, c in ipairs(misfits) do
    it("raises when " .. c[1] .. " does not fit in " .. c[2] .. " bits", function ()
      local w = bitwire.writer():bits(1, 3)
      local ok, err = pcall(w.bits, w, c[1], c[2])
      assert.is_false(ok)
      assert.matches(lit("bits: " .. c[1] .. " does not fit in " .. c[2]
                         .. " bits (bit 3)") .. "$", err)
      assert.equal(3, w:bits_written())
    end)
  end
end)

describe("writer:bool", function ()
  local bitwire = require "bitwire"
  it("writes one bit per boolean", function ()
    local w = bitwire.writer():bool(true):bool(false):bool(true)
    assert.equal(3, w:bits_written())
    assert.equal("05", tohex(w:tostring()))
  end)
  it("takes only booleans", function ()
    local w = bitwire.writer()
    assert.has_error(function () w:bool(nil) end)
    assert.has_error(function () w:bool(1) end)
  end)
end)

describe("writer:int", function ()
  local bitwire = require "bitwire"

  it("writes value - min in bits_required(min, max) bits", function ()
    local w = bitwire.writer():int(-37, -100, 100)
    assert.equal(8, w:bits_written())
    assert.equal("3f", tohex(w:tostring()))
  end)

  it("writes nothing when min == max", function ()
    assert.equal(0, bitwire.writer():int(42, 42, 42):bits_written())
  end)

  it("raises with the value, the range and the bit position", function ()
    local w = bitwire.writer():bits(0, 12)
    local ok, err = pcall(w.int, w, 117, 0, 100)
    assert.is_false(ok)
    assert.matches("int: 117 out of range %[0, 100%] %(bit 12%)$", err)
    ok, err = pcall(w.int, w, -1, 0, 100)
    assert.is_false(ok)
    assert.matches("int: %-1 out of range %[0, 100%] %(bit 12%)$", err)
  end)
end)

describe("writer:float", function ()
  local bitwire = require "bitwire"
  it("writes the IEEE-754 float32 pattern", function ()
    local w = bitwire.writer():float(1.5):float(-0.0)
    assert.equal("0000c03f00000080", tohex(w:tostring()))
  end)
  it("rounds doubles to float32 and takes integers", function ()
    local r = bitwire.reader(bitwire.writer():float(0.1):float(3):tostring())
    assert.equal(helpers.f32raw(0.1), helpers.f32raw(r:float()))
    assert.equal(3.0, r:float())
  end)
  it("keeps infinities and turns doubles beyond float32 into them", function ()
    local r = bitwire.reader(bitwire.writer():float(1e300):float(-math.huge)
                              :tostring())
    assert.equal(math.huge, r:float())
    assert.equal(-math.huge, r:float())
  end)
  it("keeps NaN", function ()
    local x = bitwire.reader(bitwire.writer():float(0 / 0):tostring()):float()
    assert.is_true(x ~= x)
  end)
end)

describe("writer:double", function ()
  local bitwire = require "bitwire"
  it("writes the IEEE-754 float64 pattern", function ()
    local w = bitwire.writer():bits(1, 1):double(1 / 3)
    local r = bitwire.reader(w:tostring())
    r:bits(1)
    assert.equal(1 / 3, r:double())
    assert.equal(65, w:bits_written())
  end)
  it("round-trips extremes", function ()
    for _, x in ipairs { math.huge, -math.huge, 2.2250738585072014e-308,
                         4.9e-324, 1.7976931348623157e308, -0.0, 3 } do
      local y = bitwire.reader(bitwire.writer():double(x):tostring()):double()
      assert.equal(helpers.f64raw(x * 1.0), helpers.f64raw(y))
    end
  end)
end)

describe("writer:compressed_float", function ()
  local bitwire = require "bitwire"
  it("quantizes to bits_required(0, ceil((max-min)/res)) bits", function ()
    local w = bitwire.writer():compressed_float(1.2345, -10, 10, 0.01)
    assert.equal(11, w:bits_written())
    assert.equal("6304", tohex(w:tostring()))
  end)
  it("clamps to [min, max] and maps NaN to min", function ()
    local w = bitwire.writer():compressed_float(99, 0, 10, 1)
      :compressed_float(-99, 0, 10, 1):compressed_float(0 / 0, 0, 10, 1)
    local r = bitwire.reader(w:tostring())
    assert.equal(10.0, r:compressed_float(0, 10, 1))
    assert.equal(0.0, r:compressed_float(0, 10, 1))
    assert.equal(0.0, r:compressed_float(0, 10, 1))
  end)
  local bad = { {0, 0, 1}, {1, 0, 1}, {0, 1, 0}, {0, 1, -1}, {0, math.huge, 1},
                {0 / 0, 1, 1}, {0, 1, 0 / 0} }
  for _, c in ipairs(bad) do
    it(string.format("raises on min %s, max %s, res %s", c[1], c[2], c[3]), function ()
      local w = bitwire.writer()
      local ok, err = pcall(w.compressed_float, w, 0.5, c[1], c[2], c[3])
      assert.is_false(ok)
      assert.matches("compressed_float: bad range", err)
      local r = bitwire.reader("\0\0\0\0")
      assert.has_error(function () r:compressed_float(c[1], c[2], c[3]) end)
    end)
  end
end)

describe("writer:align", function ()
  local bitwire = require "bitwire"
  it("pads with zero bits to the next byte, none when aligned", function ()
    local w = bitwire.writer():align()
    assert.equal(0, w:bits_written())
    w:bits(1, 1):align()
    assert.equal(8, w:bits_written())
    w:align()
    assert.equal(8, w:bits_written())
    assert.equal("01", tohex(w:tostring()))
  end)
end)

describe("writer:bytes", function ()
  local bitwire = require "bitwire"
  it("aligns, then copies the bytes without a length", function ()
    local w = bitwire.writer():bits(1, 1):bytes("\0\255abc"):bytes("")
    assert.equal("0100ff616263", tohex(w:tostring()))
  end)
  it("copies long strings at every offset", function ()
    local s = {}
    for i = 0, 1000 do s[#s + 1] = string.char(i % 256) end
    s = table.concat(s)
    for off = 0, 9 do
      local w = bitwire.writer():bits(0, off):bytes(s):bits(3, 2)
      local r = bitwire.reader(w:tostring())
      r:bits(off)
      assert.equal(s, r:bytes(#s))
      assert.equal(3, r:bits(2))
    end
  end)
end)

describe("writer:string", function ()
  local bitwire = require "bitwire"
  it("writes int(#s, 0, maxlen) then the bytes", function ()
    local w = bitwire.writer():string("héllo", 63)
    assert.equal("0668c3a96c6c6f", tohex(w:tostring()))
  end)
  it("writes the empty string", function ()
    local w = bitwire.writer():string("", 15)
    assert.equal(8, w:bits_written())
  end)
  local bad = {
    {"abcdef", 5, "string: length 6 exceeds maxlen 5 %(bit 2%)$"},
    {"a\0b", 10, "string: invalid UTF%-8 or NUL byte %(bit 2%)$"},
    {"\195\40", 10, "string: invalid UTF%-8 or NUL byte %(bit 2%)$"},
    {"\237\160\128", 10, "string: invalid UTF%-8 or NUL byte %(bit 2%)$"},
  }
  for _, c in ipairs(bad) do
    it("raises on " .. string.format("%q", c[1]) .. " with maxlen " .. c[2], function ()
      local w = bitwire.writer():bits(0, 2)
      local ok, err = pcall(w.string, w, c[1], c[2])
      assert.is_false(ok)
      assert.matches(c[3], err)
      assert.equal(2, w:bits_written())
    end)
  end
end)

describe("writer:int_relative", function ()
  local bitwire = require "bitwire"
  it("uses the tier of the difference", function ()
    local cases = { {100, 101, 1}, {100, 106, 5}, {100, 123, 8},
                    {100, 380, 13}, {100, 4477, 18}, {100, 70014, 23},
                    {100, 70015, 38}, {-2147483648, 2147483647, 38} }
    for _, c in ipairs(cases) do
      local w = bitwire.writer():int_relative(c[1], c[2])
      assert.equal(c[3], w:bits_written())
      assert.equal(c[2], bitwire.reader(w:tostring()):int_relative(c[1]))
    end
  end)
  -- serialize.h's serialize_int_relative takes signed 32-bit ints, and the
  -- seed's serialize_scene_d starts from previous_index = -1
  it("works on signed 32-bit ints as serialize.h, from -1 included", function ()
    local cases = { {-1, 0, 1}, {-1, 5, 5}, {-100, -50, 13},
      {-70000, 5, 38}, {-2000000000, -5, 38}, {-2147483648, -2147483647, 1} }
    for _, c in ipairs(cases) do
      local w = bitwire.writer():int_relative(c[1], c[2])
      assert.equal(c[3], w:bits_written())
      assert.equal(c[2], bitwire.reader(w:tostring()):int_relative(c[1]))
    end
    -- the escape carries the current value as a uint32: -5 is 0xfffffffb
    local r = bitwire.reader(bitwire.writer():int_relative(-2000000000, -5):tostring())
    assert.equal(0, r:bits(6))
    assert.equal(0xfffffffb, r:bits(32))
  end)
  it("reads an escaped value that does not rise as range", function ()
    local w = bitwire.writer():bits(0, 6):bits(0xfffffffb, 32)   -- -5
    local v, err, code = bitwire.reader(w:tostring()):int_relative(-1)
    assert.is_nil(v)
    assert.equal("range", code, err)
  end)
  local bad = { {5, 5}, {6, 5}, {0, 1 << 31}, {-(1 << 31) - 1, 0} }
  for _, c in ipairs(bad) do
    it("raises on previous " .. c[1] .. ", current " .. c[2], function ()
      local w = bitwire.writer()
      local ok, err = pcall(w.int_relative, w, c[1], c[2])
      assert.is_false(ok)
      assert.matches(lit("int_relative: " .. c[2] .. " after " .. c[1]
        .. " is not rising in [-2147483648, 2147483647] (bit 0)") .. "$", err)
    end)
  end
end)

describe("writer:check", function ()
  local bitwire = require "bitwire"
  it("aligns, then writes 0x12345678 or the given magic", function ()
    local w = bitwire.writer():bits(1, 1):check():check(0xdeadbeef)
    assert.equal("0178563412efbeadde", tohex(w:tostring()))
  end)
end)

describe("writer:bits_written", function ()
  local bitwire = require "bitwire"
  it("counts bits, not bytes", function ()
    local w = bitwire.writer():bits(0, 13)
    assert.equal(13, w:bits_written())
    assert.equal(2, #w:tostring())
  end)
end)

describe("writer:tostring", function ()
  local bitwire = require "bitwire"
  it("gives ceil(bits/8) bytes with zero high bits in the last", function ()
    local w = bitwire.writer():bits(0x1ff, 9)
    assert.equal("ff01", tohex(w:tostring()))
  end)
end)
