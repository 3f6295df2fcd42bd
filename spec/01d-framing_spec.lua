-- Framing: writer:frame_begin / writer:frame_end and bitwire.frame_open, the
-- CRC32 over protocol id and packet, and the optional end check.

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

  -- a fourth value: the path decode and dissect name that part by
  it("names the part of the frame that failed", function ()
    local p = packet(false)
    local bad = string.char(p:byte(1) ~ 1) .. p:sub(2)
    assert.equal("frame", select(4, bitwire.frame_open("\1\2\3", PROTOCOL)))
    assert.equal("frame.crc", select(4, bitwire.frame_open(bad, PROTOCOL)))
    assert.equal("frame.check", select(4, bitwire.frame_open(p, PROTOCOL, true)))
    assert.same({ frame = "frame", crc = "frame.crc", tag = "frame.tag",
      version = "frame.version", delta = "frame.delta", baseline_id = "frame.baseline_id",
      type = "frame.type", check = "frame.check" }, require("bitwire.core").frame_paths)
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
