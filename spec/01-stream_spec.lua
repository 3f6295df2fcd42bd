-- The Lua stream API: bitwire.writer, bitwire.reader, their methods,
-- bits_required, framing, and serialize.h's sample vectors through it all.
local helpers = require "spec.helpers"
local tohex, fromhex = helpers.tohex, helpers.fromhex

-- a Lua pattern matching 's' literally
local function lit (s)
  return (tostring(s):gsub("%p", "%%%0"))
end

describe("require 'bitwire'", function ()
  it("adds nothing to _G", function ()
    local before = helpers.globals()
    for name in pairs(package.loaded) do
      if name == "bitwire" or name:match("^bitwire%.") then
        package.loaded[name] = nil
      end
    end
    require "bitwire"
    for k in pairs(_G) do
      assert.is_true(before[k], "new global " .. tostring(k))
    end
  end)

  it("exports the stream functions and a version string", function ()
    local bitwire = require "bitwire"
    local core = require "bitwire.core"
    assert.equal(core.writer, bitwire.writer)
    assert.equal(core.reader, bitwire.reader)
    assert.equal(core.bits_required, bitwire.bits_required)
    assert.equal(core.frame_open, bitwire.frame_open)
    assert.matches("^%d+%.%d+%.%d+$", core.version)
  end)

  it("names its userdata types bitwire.Writer and bitwire.Reader", function ()
    local bitwire = require "bitwire"
    assert.matches("^bitwire%.Writer: ", tostring(bitwire.writer()))
    assert.matches("^bitwire%.Reader: ", tostring(bitwire.reader("")))
  end)
end)

describe("bitwire.bits_required", function ()
  local bitwire = require "bitwire"
  local cases = {
    {0, 0, 0}, {5, 5, 0}, {0, 1, 1}, {0, 2, 2}, {0, 255, 8}, {0, 256, 9},
    {-100, 100, 8}, {-1, 0, 1}, {0, 0x7fffffff, 31}, {-1, 0x7fffffff, 32},
    {math.mininteger, -1, 63}, {math.mininteger, math.maxinteger, 64},
    {-1, math.maxinteger, 64}, {math.maxinteger, math.maxinteger, 0},
  }
  for _, c in ipairs(cases) do
    it(string.format("is %d for [%d, %d]", c[3], c[1], c[2]), function ()
      assert.equal(c[3], bitwire.bits_required(c[1], c[2]))
    end)
  end

  it("raises when min > max", function ()
    assert.has_error(function () bitwire.bits_required(2, 1) end)
  end)
end)

describe("serialize.h sample vectors", function ()
  local bitwire = require "bitwire"
  local samples = helpers.samples()

  for _, case in ipairs(samples) do
    it(case.name .. " writes " .. case.hex, function ()
      local w = bitwire.writer()
      local pos = 0
      for _, op in ipairs(case.ops) do
        assert.equal(w, helpers.write_op(w, op))
        if op.op == "compressed_float" then
          assert.equal(op.qbits, w:bits_written() - pos)
        end
        pos = w:bits_written()
      end
      assert.equal(case.bits, w:bits_written())
      assert.equal(case.hex, tohex(w:tostring()))
      assert.equal(math.ceil(case.bits / 8), #w:tostring())
    end)

    it(case.name .. " reads back", function ()
      local r = bitwire.reader(fromhex(case.hex))
      for i, op in ipairs(case.ops) do
        local v, err = helpers.read_op(r, op)
        assert.is_nil(err, "op " .. i)
        assert.equal(helpers.expected(op), v, "op " .. i)
        if op.raw and op.op == "float" then
          assert.equal(op.raw, helpers.f32raw(v))
        elseif op.raw and op.op == "double" then
          assert.equal(op.raw, helpers.f64raw(v))
        elseif op.decoded_raw then
          assert.equal(op.decoded_raw, helpers.f32raw(v))
        end
      end
      assert.equal(case.bits, r:bits_read())
      assert.equal(#case.hex * 4 - case.bits, r:bits_remaining())
    end)
  end

  local codes = {
    int_value_above_range = "range",
    align_nonzero_padding = "align",
    read_past_end_bits32 = "truncated",
    string_invalid_utf8 = "utf8",
  }
  for _, case in ipairs(samples.negative) do
    it(case.name .. " fails at op " .. case.fails_at, function ()
      local r = bitwire.reader(fromhex(case.hex))
      for i, op in ipairs(case.ops) do
        local v, err, code = helpers.read_op(r, op)
        if i < case.fails_at then
          assert.is_not_nil(v, "op " .. i .. ": " .. tostring(err))
        else
          assert.is_nil(v)
          assert.equal(codes[case.name], code)
          assert.matches("^" .. op.op .. ": .* %(bit %d+%)$", err)
          break
        end
      end
    end)
  end

  for _, case in ipairs(samples.accept) do
    it(case.name .. " is accepted", function ()
      local r = bitwire.reader(fromhex(case.hex))
      for i, op in ipairs(case.ops) do
        local v, err = helpers.read_op(r, op)
        assert.is_nil(err)
        assert.equal(op.value, v, "op " .. i)
      end
    end)
  end
end)

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
    {"02c328", 15, "utf8", "string: invalid string (bit 4)"},
    {"026100", 15, "utf8", "string: invalid string (bit 4)"},
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

describe("bad arguments", function ()
  local bitwire = require "bitwire"
  local w, r = bitwire.writer(), bitwire.reader("\0\0\0\0\0\0\0\0")
  local cases = {
    {"writer(-1)", function () bitwire.writer(-1) end},
    {"writer('x')", function () bitwire.writer("x") end},
    {"reader()", function () bitwire.reader() end},
    {"reader({})", function () bitwire.reader({}) end},
    {"bits_required(1.5, 2)", function () bitwire.bits_required(1.5, 2) end},
    {"w:bits(1, 65)", function () w:bits(1, 65) end},
    {"w:bits(1, -1)", function () w:bits(1, -1) end},
    {"w:bits('a', 8)", function () w:bits("a", 8) end},
    {"w:bits(1.5, 8)", function () w:bits(1.5, 8) end},
    {"w:bits(1)", function () w:bits(1) end},
    {"w:bool('x')", function () w:bool("x") end},
    {"w:int(1, 5, 0)", function () w:int(1, 5, 0) end},
    {"w:int(nil, 0, 1)", function () w:int(nil, 0, 1) end},
    {"w:int(1, 0)", function () w:int(1, 0) end},
    {"w:float('x')", function () w:float("x") end},
    {"w:double(nil)", function () w:double(nil) end},
    {"w:compressed_float(1, 0, 1)", function () w:compressed_float(1, 0, 1) end},
    {"w:bytes(nil)", function () w:bytes(nil) end},
    {"w:bytes({})", function () w:bytes({}) end},
    {"w:string('a', -1)", function () w:string("a", -1) end},
    {"w:string('a')", function () w:string("a") end},
    {"w:int_relative(1)", function () w:int_relative(1) end},
    {"w:check(-1)", function () w:check(-1) end},
    {"w:check(1 << 32)", function () w:check(1 << 32) end},
    {"w:frame_end('x')", function () bitwire.writer():frame_begin():frame_end("x") end},
    {"writer method on a reader", function () w.bits(r, 1, 1) end},
    {"reader method on a writer", function () r.bits(w, 1) end},
    {"r:bits(65)", function () r:bits(65) end},
    {"r:bits(-1)", function () r:bits(-1) end},
    {"r:bits()", function () r:bits() end},
    {"r:int(5, 0)", function () r:int(5, 0) end},
    {"r:int(0)", function () r:int(0) end},
    {"r:bytes(-1)", function () r:bytes(-1) end},
    {"r:string(-1)", function () r:string(-1) end},
    {"r:string()", function () r:string() end},
    {"r:int_relative(-(1 << 31) - 1)", function () r:int_relative(-(1 << 31) - 1) end},
    {"r:int_relative(1 << 31)", function () r:int_relative(1 << 31) end},
    {"r:check(1 << 32)", function () r:check(1 << 32) end},
    {"r:compressed_float(1, 0, 1)", function () r:compressed_float(1, 0, 1) end},
    {"frame_open(nil, 1)", function () bitwire.frame_open(nil, 1) end},
    {"frame_open('x')", function () bitwire.frame_open("xxxx") end},
  }
  for _, c in ipairs(cases) do
    it(c[1] .. " raises", function ()
      assert.has_error(c[2])
    end)
  end

  it("name the argument and the method", function ()
    local ok, err = pcall(function () w:bits(1, 65) end)
    assert.is_false(ok)
    assert.matches("bad argument #2 to 'bits' %(bit count must be in 0%.%.64%)", err)
    ok, err = pcall(function () r:int(5, 0) end)
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'int' %(min > max%)", err)
  end)

  it("leave the reader usable", function ()
    assert.equal(8, r:bits(8) + 8)
    assert.equal(8, r:bits_read())
  end)
end)

describe("framing", function ()
  local bitwire = require "bitwire"
  local PROTOCOL = 0x1234567890abcdef

  local function packet (endcheck)
    return bitwire.writer():frame_begin():int(-37, -100, 100):string("hi", 7)
      :bits(5, 3):frame_end(PROTOCOL, endcheck):tostring()
  end

  for _, endcheck in ipairs { false, true } do
    it("round-trips a packet (endcheck " .. tostring(endcheck) .. ")", function ()
      local p = packet(endcheck)
      assert.equal(4 + 1 + 3 + 1 + (endcheck and 4 or 0), #p)
      local r, err, code = bitwire.frame_open(p, PROTOCOL, endcheck)
      assert.is_nil(err, code)
      assert.equal(32, r:bits_read())
      assert.equal(-37, r:int(-100, 100))
      assert.equal("hi", r:string(7))
      assert.equal(5, r:bits(3))
      assert.equal(5, r:bits_remaining())  -- the padding, not the check
    end)
  end

  it("gives code crc for every flipped bit", function ()
    local p = packet(true)
    for i = 1, #p * 8 do
      local byte, bit = (i - 1) // 8 + 1, (i - 1) % 8
      local bad = p:sub(1, byte - 1)
        .. string.char(p:byte(byte) ~ (1 << bit)) .. p:sub(byte + 1)
      local r, err, code = bitwire.frame_open(bad, PROTOCOL, true)
      assert.is_nil(r)
      assert.equal("crc", code)
      assert.equal("frame: CRC32 mismatch (bit 0)", err)
    end
  end)

  it("gives code crc for another protocol id", function ()
    local r, _, code = bitwire.frame_open(packet(false), PROTOCOL + 1)
    assert.is_nil(r)
    assert.equal("crc", code)
  end)

  it("gives code truncated for a packet shorter than its header", function ()
    local r, err, code = bitwire.frame_open("\1\2\3", PROTOCOL)
    assert.is_nil(r)
    assert.equal("truncated", code)
    assert.matches("^frame: truncated input %(bit %d+%)$", err)
  end)

  it("gives code check for a packet without the end check", function ()
    -- the CRC covers the bytes as they are; only the tail is wrong
    local p = packet(false)
    local r, err, code = bitwire.frame_open(p, PROTOCOL, true)
    assert.is_nil(r)
    assert.equal("check", code)
    assert.equal("frame: serialization check failed (bit " .. (#p - 4) * 8
                 .. ")", err)
  end)

  it("refuses frame_begin on a non-empty writer", function ()
    local w = bitwire.writer():bits(1, 1)
    local ok, err = pcall(w.frame_begin, w)
    assert.is_false(ok)
    assert.matches("frame_begin: the writer is not empty %(bit 1%)$", err)
  end)

  it("refuses frame_end without frame_begin", function ()
    local w = bitwire.writer():bits(0, 40)
    assert.has_error(function () w:frame_end(PROTOCOL) end)
  end)

  it("refuses writes after frame_end", function ()
    local w = bitwire.writer():frame_begin():frame_end(PROTOCOL)
    local ok, err = pcall(w.bool, w, true)
    assert.is_false(ok)
    assert.matches("bool: the frame has ended", err)
    assert.equal(4, #w:tostring())
  end)
end)
