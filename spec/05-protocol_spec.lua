-- bitwire.protocol: framed packets (CRC32 over a protocol id that is never
-- sent, the message, an end check), and what a receiver rejects.
local bitwire = require "bitwire"
local H = require "spec.helpers"
local tohex, errorof, contains, lcg =
  H.tohex, H.errorof, H.contains, H.lcg

local forge = H.forge

local function flip (s, bit)
  local i = bit // 8 + 1
  return s:sub(1, i - 1) .. string.char(s:byte(i) ~ (1 << bit % 8)) .. s:sub(i + 1)
end

local DESC = {
  Move = { { "x", "int", min = -1000, max = 1000 }, { "y", "int", min = -1000, max = 1000 },
           { "run", "bool" } },
  Chat = { { "text", "string", max = 40 } },
  Hit = { { "target", "uint", bits = 16 }, { "damage", "float", min = 0, max = 100, res = 0.5 },
          { "crit", "bool", optional = true } },
}
local VALUES = {
  { "Move", { x = -12, y = 640, run = true } },
  { "Chat", { text = "gg wp ✓" } },
  { "Hit", { target = 513, damage = 37.5, crit = true } },
  { "Hit", { target = 0, damage = 0.0 } },
}

local function schema () return bitwire.schema(DESC) end

describe("bitwire.protocol", function ()
  it("makes a protocol from a schema and options", function ()
    local p = bitwire.protocol(schema(), { id = 7 })
    assert.is_function(p.encode)
    assert.is_function(p.decode)
  end)

  it("defaults to id 0 with no options", function ()
    local s = schema()
    local a, b = bitwire.protocol(s), bitwire.protocol(s, { id = 0 })
    assert.equal(a:encode("Chat", { text = "x" }), b:encode("Chat", { text = "x" }))
  end)

  local BAD = {
    { "a first argument that is not a schema", { 5 },
      "bitwire.protocol: first argument must be a schema" },
    { "a table that is not a schema", { {} },
      "bitwire.protocol: first argument must be a schema" },
    { "options that are not a table", { "schema", 5 },
      "bitwire.protocol: options must be a table" },
    { "an id that is not an integer", { "schema", { id = 1.5 } },
      "bitwire.protocol: 'id' must be an integer" },
    { "an id that is a string", { "schema", { id = "7" } },
      "bitwire.protocol: 'id' must be an integer" },
  }
  for _, c in ipairs(BAD) do
    it("raises on " .. c[1], function ()
      local args = c[2]
      if args[1] == "schema" then args = { schema(), args[2] } end
      contains(c[3], errorof(bitwire.protocol, table.unpack(args, 1, 2)))
    end)
  end
end)

describe("protocol:encode", function ()
  it("round-trips every message type through decode", function ()
    local p = bitwire.protocol(schema(), { id = 0x5eed })
    for _, c in ipairs(VALUES) do
      local name, value = p:decode(p:encode(c[1], c[2]))
      assert.equal(c[1], name)
      assert.same(c[2], value)
    end
  end)

  it("adds overhead() bytes to the message", function ()
    local s = schema()
    for _, opts in ipairs { { id = 1 }, { id = 1, check = false } } do
      local p = bitwire.protocol(s, opts)
      for _, c in ipairs(VALUES) do
        local msg = s:encode_message(c[1], c[2])
        assert.equal(#msg + p:overhead(), #p:encode(c[1], c[2]))
      end
    end
  end)

  it("writes CRC32(id as 8 little-endian bytes .. payload), then the payload", function ()
    local s = schema()
    local p = bitwire.protocol(s, { id = 0x1234, fingerprint = false })
    local packet = p:encode("Chat", { text = "hi" })
    local payload = s:encode_message("Chat", { text = "hi" }) .. "\x78\x56\x34\x12"
    assert.equal(tohex(forge(0x1234, payload)), tohex(packet))
  end)

  it("writes the same bytes as the stream API's frame_begin/frame_end", function ()
    local s = schema()
    local p = bitwire.protocol(s, { id = 99, fingerprint = false })
    local w = bitwire.writer()
    if not w.frame_begin then
      pending("stream API has no frame_begin")
      return
    end
    w:frame_begin()
    w:bits(2, 2)                          -- Move is type 2 of Chat, Hit, Move
    w:int(-12, -1000, 1000) w:int(640, -1000, 1000) w:bool(true)
    w:frame_end(99, true)
    assert.equal(tohex(w:tostring()), tohex(p:encode("Move", VALUES[1][2])))
  end)

  it("raises like schema:encode on a value that does not fit", function ()
    local p = bitwire.protocol(schema())
    contains("x: 1001 out of range [-1000, 1000]",
      errorof(p.encode, p, "Move", { x = 1001, y = 0, run = false }))
    contains("unknown type 'Nope'", errorof(p.encode, p, "Nope", {}))
  end)
end)

describe("protocol:decode", function ()
  local s = schema()
  local p = bitwire.protocol(s, { id = 0x5eed })

  it("rejects every single-bit flip of a packet", function ()
    for _, c in ipairs(VALUES) do
      local packet = p:encode(c[1], c[2])
      for bit = 0, #packet * 8 - 1 do
        local ok, name, err, code = pcall(p.decode, p, flip(packet, bit))
        assert.is_true(ok, name)
        assert.is_nil(name, "flip of bit " .. bit .. " accepted")
        assert.is_true(code == "crc" or code == "check", code)
        assert.matches("%(bit %d+%)$", err)
      end
    end
  end)

  it("rejects a packet shorter than the overhead as truncated", function ()
    local packet = p:encode("Move", VALUES[1][2])
    for n = 0, p:overhead() - 1 do
      local name, err, code = p:decode(packet:sub(1, n))
      assert.is_nil(name)
      assert.equal("truncated", code)
      assert.matches("%(bit %d+%)$", err)
    end
  end)

  it("rejects every cut of a packet", function ()
    for _, c in ipairs(VALUES) do
      local packet = p:encode(c[1], c[2])
      for n = 0, #packet - 1 do
        local name, _, code = p:decode(packet:sub(1, n))
        assert.is_nil(name)
        assert.is_true(code == "truncated" or code == "crc", code)
      end
    end
  end)

  it("rejects a packet of a protocol with another id, with code crc", function ()
    local other = bitwire.protocol(s, { id = 0x5eee })
    local name, err, code = p:decode(other:encode("Move", VALUES[1][2]))
    assert.is_nil(name)
    assert.equal("crc", code)
    assert.equal("frame.crc: CRC32 mismatch: corrupt, or another protocol id or definitions "
      .. "(bit 0)", err)
  end)

  it("rejects a packet of another schema (another fingerprint), with code crc", function ()
    local desc2 = { Move = { { "x", "int", min = -1000, max = 1001 },
                             { "y", "int", min = -1000, max = 1000 }, { "run", "bool" } },
                    Chat = DESC.Chat, Hit = DESC.Hit }
    local s2 = bitwire.schema(desc2)
    assert.are_not.equal(s:fingerprint(), s2:fingerprint())
    local other = bitwire.protocol(s2, { id = 0x5eed })
    local name, _, code = p:decode(other:encode("Move", VALUES[1][2]))
    assert.is_nil(name)
    assert.equal("crc", code)
    name, _, code = other:decode(p:encode("Chat", VALUES[2][2]))
    assert.is_nil(name)
    assert.equal("crc", code)
  end)

  it("accepts a packet of the same description compiled again", function ()
    local again = bitwire.protocol(bitwire.schema(DESC), { id = 0x5eed })
    local name, value = again:decode(p:encode("Hit", VALUES[3][2]))
    assert.equal("Hit", name)
    assert.same(VALUES[3][2], value)
  end)

  it("with fingerprint = false, lets schemas that differ share packets", function ()
    local s2 = bitwire.schema { Move = { { "x", "int", min = -1000, max = 1001 },
                                         { "y", "int", min = -1000, max = 1000 },
                                         { "run", "bool" } },
                                Chat = DESC.Chat, Hit = DESC.Hit }
    local a = bitwire.protocol(s, { id = 3, fingerprint = false })
    local b = bitwire.protocol(s2, { id = 3, fingerprint = false })
    local name, value = b:decode(a:encode("Move", VALUES[1][2]))
    assert.equal("Move", name)
    assert.same(VALUES[1][2], value)
  end)

  it("with fingerprint = false, still rejects another id", function ()
    local a = bitwire.protocol(s, { id = 3, fingerprint = false })
    local b = bitwire.protocol(s, { id = 4, fingerprint = false })
    local name, _, code = b:decode(a:encode("Chat", VALUES[2][2]))
    assert.is_nil(name)
    assert.equal("crc", code)
  end)

  it("differs from fingerprint = true on the wire", function ()
    local a = bitwire.protocol(s, { id = 3, fingerprint = false })
    local b = bitwire.protocol(s, { id = 3 })
    assert.are_not.equal(a:encode("Chat", VALUES[2][2]), b:encode("Chat", VALUES[2][2]))
    local name, _, code = b:decode(a:encode("Chat", VALUES[2][2]))
    assert.is_nil(name)
    assert.equal("crc", code)
  end)

  it("rejects a packet with a valid CRC but a wrong end check, with code check", function ()
    local a = bitwire.protocol(s, { id = 3, fingerprint = false })
    local payload = s:encode_message("Chat", { text = "hi" }) .. "\x78\x56\x34\x13"
    local name, err, code = a:decode(forge(3, payload))
    assert.is_nil(name)
    assert.equal("check", code)
    assert.equal("frame.check: serialization check failed (bit " .. 8 * (#payload) .. ")", err)
  end)

  it("rejects a packet with a valid CRC but an unknown message type, with code tag", function ()
    local a = bitwire.protocol(s, { id = 3, fingerprint = false })
    local name, err, code = a:decode(forge(3, "\3\x78\x56\x34\x12"))
    assert.is_nil(name)
    assert.equal("tag", code)
    assert.equal("frame.type: message type 3 out of range [0, 2] (bit 32)", err)
  end)

  it("rejects a packet with a valid CRC but a bad value, naming the field", function ()
    local a = bitwire.protocol(s, { id = 3, fingerprint = false })
    -- Chat (type 0), text length 63 > 40
    local name, err, code = a:decode(forge(3, "\xfc\x78\x56\x34\x12"))
    assert.is_nil(name)
    assert.equal("range", code)
    contains("text: length 63 out of range [0, 40] (bit 34)", err)
  end)

  it("with check = false, has no end check and still round-trips", function ()
    local a = bitwire.protocol(s, { id = 3, check = false })
    local packet = a:encode("Move", VALUES[1][2])
    assert.equal(#s:encode_message("Move", VALUES[1][2]) + 4, #packet)
    local name, value = a:decode(packet)
    assert.equal("Move", name)
    assert.same(VALUES[1][2], value)
    for bit = 0, #packet * 8 - 1 do
      local n, _, code = a:decode(flip(packet, bit))
      assert.is_nil(n)
      assert.equal("crc", code)
    end
  end)

  it("never raises on seeded random packets", function ()
    local rand = lcg(99)
    for _ = 1, 3000 do
      local t = {}
      for i = 1, rand(24) do t[i] = string.char(rand(256)) end
      local ok, name, err, code = pcall(p.decode, p, table.concat(t))
      assert.is_true(ok, name)
      assert.is_nil(name)
      assert.is_true(code == "crc" or code == "truncated", code)
      assert.is_string(err)
    end
  end)

  it("decodes into a table", function ()
    local t = {}
    local name, value = p:decode(p:encode("Move", VALUES[1][2]), { into = t })
    assert.equal("Move", name)
    assert.equal(t, value)
    assert.same(VALUES[1][2], t)
  end)

  it("raises when the packet is not a string", function ()
    contains("bitwire.protocol: decode expects a string, got number",
      errorof(p.decode, p, 5))
  end)
end)

describe("protocol errors", function ()
  -- The error of f(...) called from a line of this file, and that line.
  -- (Called from pcall itself, an error at level 2 has no position.)
  local function raised (f, ...)
    local line
    local ok, err = pcall(function (...)
      line = debug.getinfo(1, "l").currentline + 1
      local r = f(...)
      return r
    end, ...)
    assert.is_false(ok, "expected an error")
    return tostring(err), line
  end

  -- the position at the start of 'err' is this file's 'line'
  local function at (line, err)
    local file, n = err:match("^([^:\n]*_spec%.lua):(%d+): ")
    assert(file, "expected a _spec.lua position in '" .. err .. "'")
    assert.matches("05%-protocol_spec%.lua$", file)
    assert.equal(line, tonumber(n))
  end

  local strict = bitwire.schema(DESC, { strict = true })
  local MOVE = { x = 1, y = 2, run = true }
  local CASES = {
    { "a value that does not fit", "Move", { x = 1001, y = 0, run = false }, nil,
      "x: 1001 out of range [-1000, 1000]" },
    { "an unknown field under strict", "Move", { x = 1, y = 2, run = true, jump = true }, nil,
      "unknown key 'jump' (strict: Move declares no such field)" },
    { "a wrong type name", "Nope", MOVE, nil, "unknown type 'Nope'" },
    { "an unknown call option", "Move", MOVE, { basline = MOVE },
      "bitwire.protocol: unknown encode option 'basline'" },
    { "a baseline that is not a table", "Move", MOVE, { baseline = 5 },
      "bitwire.protocol: 'baseline' must be a table" },
    { "a baseline id out of range", "Move", MOVE, { baseline = MOVE, baseline_id = 70000 },
      "bitwire.protocol: 'baseline_id' must be an integer in [0, 65535]" },
  }
  for _, opts in ipairs { { id = 3 }, { id = 3, deltas = true } } do
    for _, c in ipairs(CASES) do
      if opts.deltas or c[4] == nil or c[4].basline then
        it("p:encode raises " .. c[1] .. " at the caller's line"
            .. (opts.deltas and ", with deltas" or ""), function ()
          local p = bitwire.protocol(strict, opts)
          local err, line = raised(p.encode, p, c[2], c[3], c[4])
          at(line, err)
          contains(c[5], err)
          assert.not_matches("protocol%.lua", err)
        end)
      end
    end
  end

  it("p:encode raises a bad version at the caller's line", function ()
    local p = bitwire.protocol(strict, { versioned = true })
    local err, line = raised(p.encode, p, "Move", MOVE, { version = "x" })
    at(line, err)
    contains("bitwire.protocol: 'version' must be an integer", err)
    assert.not_matches("bad argument", err)
  end)

  it("p:decode returns nil, message, code on bad bytes, and raises misuse at the caller's line", function ()
    local p = bitwire.protocol(strict, { id = 3 })
    local packet = p:encode("Move", MOVE)
    local name, msg, code = p:decode(packet:sub(1, -2))
    assert.is_nil(name)
    assert.equal("string", type(msg))
    assert.is_string(code)
    assert.not_matches("%.lua:%d+:", msg)
    name, msg, code = p:decode(flip(packet, 40))
    assert.is_nil(name)
    assert.equal("crc", code)
    assert.not_matches("%.lua:%d+:", msg)
    local err, line = raised(p.decode, p, packet, { max_values = "x" })
    at(line, err)
    contains("bitwire.protocol: 'max_values' must be an integer", err)
    err, line = raised(p.decode, p, 5)
    at(line, err)
    contains("bitwire.protocol: decode expects a string", err)
  end)

  it("s:cost raises a value that does not fit at the caller's line", function ()
    local err, line = raised(strict.cost, strict, "Move", { x = 1001, y = 0, run = false })
    at(line, err)
    contains("x: 1001 out of range [-1000, 1000]", err)
    assert.not_matches("dissect%.lua", err)
    err, line = raised(strict.cost, strict, "Move", MOVE, { versoin = 1 })
    at(line, err)
    contains("cost: unknown option 'versoin'", err)
  end)
end)

describe("protocol:overhead", function ()
  it("is 8 bytes: CRC32 and the end check", function ()
    assert.equal(8, bitwire.protocol(schema()):overhead())
  end)

  it("is 4 bytes without the end check", function ()
    assert.equal(4, bitwire.protocol(schema(), { check = false }):overhead())
  end)

  it("counts the version and the delta header: the most framing adds", function ()
    -- messages of every length mod 8, so one ends on a byte boundary
    local s = bitwire.schema { M = { { "x", "uint", bits = 1 },
      { "y", "array", of = "bool", max = 7 } } }
    for _, opts in ipairs { { versioned = true }, { version_bits = 3 },
                            { deltas = true }, { deltas = true, versioned = true, check = false },
                            { deltas = true, version_bits = 32 } } do
      local p = bitwire.protocol(s, opts)
      local most = 0
      for n = 0, 7 do
        local v = { x = 1, y = {} }
        for i = 1, n do v.y[i] = true end
        local sizes = { #p:encode("M", v) }
        if opts.deltas then
          sizes[2] = #p:encode("M", v, { baseline = { x = 0, y = {} }, baseline_id = 9 })
        end
        for _, size in ipairs(sizes) do
          local added = size - #s:encode_message("M", v)
          assert.is_true(added <= p:overhead())
          most = math.max(most, added)
        end
      end
      assert.equal(most, p:overhead())
    end
  end)
end)
