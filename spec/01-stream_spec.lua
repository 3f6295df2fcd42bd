-- The Lua stream API as a whole: what require 'bitwire' exports,
-- bits_required, serialize.h's sample vectors through writer and reader,
-- and bad arguments to every function and method.
local helpers = require "spec.helpers"
local tohex, fromhex = helpers.tohex, helpers.fromhex

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
