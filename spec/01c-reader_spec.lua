-- bitwire.reader and its methods: the values each one reads back, and its
-- failures (nil, message, code), which stay once a read has failed.
local helpers = require "spec.helpers"
local fromhex = helpers.fromhex

describe("bitwire.reader", function ()
  local bitwire = require "bitwire"

  it("keeps its string alive", function ()
    local r = bitwire.reader(string.rep("\7", 100) .. tostring(os.time()))
    collectgarbage()
    collectgarbage()
    assert.equal(string.rep("\7", 100), r:bytes(100))
  end)

  it("counts the bits read and remaining", function ()
    local r = bitwire.reader("\1\2\3")
    assert.equal(0, r:bits_read())
    assert.equal(24, r:bits_remaining())
    r:bits(5)
    assert.equal(5, r:bits_read())
    assert.equal(19, r:bits_remaining())
  end)

  it("stays failed: later reads give the first failure again", function ()
    local r = bitwire.reader("\255")
    assert.equal(255, r:bits(8))
    local v, err, code = r:int(0, 100)
    assert.is_nil(v)
    assert.equal("int: truncated input (bit 8)", err)
    assert.equal("truncated", code)
    for _, read in ipairs {
      function () return r:bits(0) end, function () return r:bool() end,
      function () return r:align() end, function () return r:bytes(0) end,
      function () return r:string(3) end, function () return r:check() end,
      function () return r:float() end, function () return r:double() end,
      function () return r:int_relative(0) end,
      function () return r:compressed_float(0, 1, 0.5) end,
    } do
      local v2, err2, code2 = read()
      assert.is_nil(v2)
      assert.equal(err, err2)
      assert.equal(code, code2)
    end
  end)

  it("reads nothing for zero-width fields, even at the end", function ()
    local r = bitwire.reader("")
    assert.equal(0, r:bits(0))
    assert.equal(5, r:int(5, 5))
    assert.is_true(r:align())
    assert.equal("", r:bytes(0))
  end)
end)

describe("reader:bits", function ()
  local bitwire = require "bitwire"
  it("reads LSB first", function ()
    local r = bitwire.reader("\253")
    assert.equal(1, r:bits(1))
    assert.equal(2, r:bits(2))
    assert.equal(0x1f, r:bits(5))
  end)
  it("returns 64-bit patterns as Lua integers", function ()
    local r = bitwire.reader(fromhex("0000000000000080ffffffffffffffff"))
    assert.equal(math.mininteger, r:bits(64))
    assert.equal(-1, r:bits(64))
  end)
  it("fails past the end, counting bits", function ()
    local r = bitwire.reader("\1\2")
    assert.equal(0x201, r:bits(10))
    local v, err, code = r:bits(7)
    assert.is_nil(v)
    assert.equal("bits: truncated input (bit 10)", err)
    assert.equal("truncated", code)
  end)
end)

describe("reader:bool", function ()
  local bitwire = require "bitwire"
  it("reads true and false", function ()
    local r = bitwire.reader("\1")
    assert.is_true(r:bool())
    assert.is_false(r:bool())
  end)
end)

describe("reader:int", function ()
  local bitwire = require "bitwire"
  it("reads min + offset", function ()
    assert.equal(-37, bitwire.reader("\63"):int(-100, 100))
  end)
  it("fails with code range on an offset > max - min, at the field", function ()
    local r = bitwire.reader("\0\255")
    r:bits(7)
    local v, err, code = r:int(0, 100)
    assert.is_nil(v)
    assert.equal("int: value out of range (bit 7)", err)
    assert.equal("range", code)
  end)
  it("reads the full 64-bit range", function ()
    local r = bitwire.reader(fromhex("0000000000000000ffffffffffffffff"))
    assert.equal(math.mininteger, r:int(math.mininteger, math.maxinteger))
    assert.equal(math.maxinteger, r:int(math.mininteger, math.maxinteger))
  end)
end)

describe("reader:float", function ()
  local bitwire = require "bitwire"
  it("reads float32 as a Lua float", function ()
    local x = bitwire.reader(fromhex("0000c03f")):float()
    assert.equal("float", math.type(x))
    assert.equal(1.5, x)
  end)
end)

describe("reader:double", function ()
  local bitwire = require "bitwire"
  it("reads float64", function ()
    assert.equal(-2.5, bitwire.reader(string.pack("<d", -2.5)):double())
  end)
  it("fails when fewer than 64 bits remain", function ()
    local v, err, code = bitwire.reader("1234567"):double()
    assert.is_nil(v)
    assert.equal("double: truncated input (bit 0)", err)
    assert.equal("truncated", code)
  end)
end)

describe("reader:compressed_float", function ()
  local bitwire = require "bitwire"
  it("returns the float32 value the integer stands for", function ()
    local x = bitwire.reader(fromhex("6304")):compressed_float(-10, 10, 0.01)
    assert.equal(0x1.3ae15p+0, x)
  end)
  it("fails with code range on an integer > max", function ()
    -- [0, 10] at res 1: 11 values in 4 bits; 15 is not one of them
    local v, err, code = bitwire.reader("\15"):compressed_float(0, 10, 1)
    assert.is_nil(v)
    assert.equal("compressed_float: value out of range (bit 0)", err)
    assert.equal("range", code)
  end)
end)

describe("reader:align", function ()
  local bitwire = require "bitwire"
  it("returns true and skips zero padding", function ()
    local r = bitwire.reader("\1\2")
    r:bits(1)
    assert.is_true(r:align())
    assert.equal(8, r:bits_read())
    assert.is_true(r:align())
    assert.equal(8, r:bits_read())
  end)
  it("fails with code align on a non-zero padding bit", function ()
    local r = bitwire.reader("\13")
    r:bits(3)
    local v, err, code = r:align()
    assert.is_nil(v)
    assert.equal("align: non-zero padding bits (bit 3)", err)
    assert.equal("align", code)
  end)
end)

describe("reader:bytes", function ()
  local bitwire = require "bitwire"
  it("aligns, then returns 'len' bytes", function ()
    local r = bitwire.reader("\1abc")
    r:bits(1)
    assert.equal("abc", r:bytes(3))
    assert.equal(0, r:bits_remaining())
  end)
  it("fails with code truncated when the bytes are not there", function ()
    for _, len in ipairs { 4, 1 << 40, math.maxinteger } do
      local v, err, code = bitwire.reader("abc"):bytes(len)
      assert.is_nil(v)
      assert.equal("bytes: truncated input (bit 0)", err)
      assert.equal("truncated", code)
    end
  end)
end)

describe("reader:string", function ()
  local bitwire = require "bitwire"
  it("reads a length-prefixed UTF-8 string", function ()
    assert.equal("héllo", bitwire.reader(fromhex("0668c3a96c6c6f")):string(63))
  end)
  local bad = {
    {"02c328", 15, "utf8", "string: string with NUL or malformed UTF-8 (bit 4)"},
    {"026100", 15, "utf8", "string: string with NUL or malformed UTF-8 (bit 4)"},
    {"0361", 15, "truncated", "string: truncated input (bit 8)"},
    {"1061", 15, "align", "string: non-zero padding bits (bit 4)"},
    {"ff", 100, "range", "string: value out of range (bit 0)"},
  }
  for _, c in ipairs(bad) do
    it("fails with code " .. c[3] .. " on " .. c[1], function ()
      local v, err, code = bitwire.reader(fromhex(c[1])):string(c[2])
      assert.is_nil(v)
      assert.equal(c[4], err)
      assert.equal(c[3], code)
    end)
  end
end)

describe("reader:int_relative", function ()
  local bitwire = require "bitwire"
  it("reads each tier", function ()
    local r = bitwire.reader(fromhex("8524204400081002000800410000200040e02f220000f8ffffff03"))
    for _, v in ipairs { 101, 102, 106, 107, 123, 124, 380, 381, 4477, 4478,
                         70014, 70015, 0x7fffffff } do
      assert.equal(v, r:int_relative(100))
    end
  end)
  it("fails with code range when a 32-bit value does not rise", function ()
    -- six zero flags, then 50 in 32 bits: not after 100
    local w = bitwire.writer():bits(0, 6):bits(50, 32)
    local v, err, code = bitwire.reader(w:tostring()):int_relative(100)
    assert.is_nil(v)
    assert.equal("int_relative: value out of range (bit 0)", err)
    assert.equal("range", code)
  end)
end)

describe("reader:uint_relative", function ()
  local bitwire = require "bitwire"
  it("reads the escape past 2^31 - 1 as unsigned, up to 2^32 - 1", function ()
    local w = bitwire.writer():bits(0, 6):bits(0xFFFFFFFF, 32):bits(0, 6):bits(50, 32)
    local r = bitwire.reader(w:tostring())
    assert.equal(0xFFFFFFFF, r:uint_relative(3000000000))
    local v, err, code = r:uint_relative(100)
    assert.is_nil(v)
    assert.equal("uint_relative: value out of range (bit 38)", err)
    assert.equal("range", code)
    assert.is_nil(bitwire.reader(w:tostring()):int_relative(100))  -- signed: -1
    assert.has_error(function () r:uint_relative(-1) end)
    assert.has_error(function () r:uint_relative(0xFFFFFFFF) end)
  end)
end)

describe("reader:check", function ()
  local bitwire = require "bitwire"
  it("returns true on the magic value", function ()
    local r = bitwire.reader(fromhex("0178563412efbeadde"))
    r:bits(1)
    assert.is_true(r:check())
    assert.is_true(r:check(0xdeadbeef))
  end)
  it("fails with code check on another value", function ()
    local v, err, code = bitwire.reader(fromhex("78563413")):check()
    assert.is_nil(v)
    assert.equal("check: serialization check failed (bit 0)", err)
    assert.equal("check", code)
  end)
end)
