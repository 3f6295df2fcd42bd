-- C names, types and struct declarations of a compiled program
-- (s:program()), shared by the C and the serialize.h generators so both
-- sides lay out the same structs.
local M = {}

local fmt = string.format

local KEYWORDS = {}
for w in ([[auto break case char const continue default do double else enum
  extern float for goto if inline int long register restrict return short
  signed sizeof static struct switch typedef union unsigned void volatile
  while bool true false class delete friend new operator private protected
  public template this throw try typename virtual namespace using catch
  explicit mutable export asm nullptr static_assert alignof alignas
  thread_local constexpr decltype noexcept typeid typeof noreturn char8_t
  char16_t char32_t and or not xor bitand bitor compl and_eq or_eq xor_eq
  not_eq static_cast const_cast dynamic_cast reinterpret_cast concept
  requires co_await co_yield co_return consteval constinit typeof_unqual
  linux unix i386]]):gmatch("[%w_]+") do
  -- with C++'s (to C++20) and C23's keywords, the macros of assert.h,
  -- stdalign.h, stdnoreturn.h and iso646.h, and those GNU C predefines
  -- (linux = 1)
  KEYWORDS[w] = true
end

-- Raise at the generator's caller on an options table with a key the
-- generator 'who' does not take (a misspelt name or prefix is never a
-- silent default), as bitwire.options checks every other call's.
function M.checkopts(opts, known, who)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error(who .. ": options must be a table, got " .. type(opts), 3)
  end
  require("bitwire.options").check(opts, known, who, "option")
  return opts
end

-- A C identifier for the name 's': other characters become '_', a leading
-- digit gets an 'x', keywords get a trailing '_'.
function M.ident(s)
  local id = tostring(s):gsub("[^%w_]", "_")
  if id == "" or id:match("^%d") then id = "x" .. id end
  if KEYWORDS[id] then id = id .. "_" end
  return id
end

-- Names of fields and enum values may hold any bytes (type names are
-- identifiers), and a generated file must say them without a name ending
-- a string or a comment early. 's' as a C string literal: '"', '\\' and
-- '?' (so no trigraph forms) escaped, any byte outside printable ASCII as
-- three octal digits.
function M.cstring(s)
  return '"' .. tostring(s):gsub(".", function(c)
    if c:match('[\\"?]') then return "\\" .. c end
    if not c:match("[ -~]") then return fmt("\\%03o", c:byte()) end
  end) .. '"'
end

-- 's' in a comment (C's /* */ or C++'s //): printable ASCII kept but for
-- '*', '/', '?' and '\\', which, like any other byte, become \xNN: the
-- comment neither ends early nor runs on into the next line.
function M.comment(s)
  return (tostring(s):gsub(".", function(c)
    if c:match("[*/?\\]") or not c:match("[ -~]") then return fmt("\\x%02x", c:byte()) end
  end))
end

-- bits_required(0, v) of DESIGN.md, v as unsigned
function M.bitlen(v)
  local n = 0
  while v ~= 0 do v = v >> 1; n = n + 1 end
  return n
end

-- A C integer literal for the Lua integer 'v'.
function M.int(v)
  if v == math.mininteger then return "(-INT64_C(9223372036854775807) - 1)" end
  if v >= 0 and v <= 0x7fffffff then return tostring(v) end
  return fmt("INT64_C(%d)", v)
end

-- A C unsigned literal for the Lua integer 'v' taken as unsigned 64-bit.
function M.uint(v)
  if v >= 0 and v <= 0x7fffffff then return tostring(v) .. "u" end
  return fmt("UINT64_C(%s)", math.ult(v, 0) and fmt("%u", v)
    or fmt("0x%x", v))
end

-- A float32 literal that reads back as exactly 'x' (a float32 value).
function M.float(x)
  if x ~= x or x == math.huge or x == -math.huge then
    error("bitwire.gen: non-finite float constant", 0)
  end
  local s = fmt("%.9g", x)
  if not s:find("[%.e]") then s = s .. ".0" end
  return s .. "f"
end

-- A double literal that reads back as exactly 'x'.
function M.double(x)
  local s = fmt("%.17g", x)
  if not s:find("[%.e]") then s = s .. ".0" end
  return s
end

-- The narrowest C integer type holding [lo, hi], with its own range.
local UNSIGNED = { { "uint8_t", 0xff }, { "uint16_t", 0xffff },
                   { "uint32_t", 0xffffffff } }
local SIGNED = { { "int8_t", -0x80, 0x7f }, { "int16_t", -0x8000, 0x7fff },
                 { "int32_t", -0x80000000, 0x7fffffff } }
function M.inttype(lo, hi)
  if lo >= 0 then
    if hi < 0 then return "uint64_t", 0, -1 end   -- 2^64 - 1 as unsigned
    for _, t in ipairs(UNSIGNED) do
      if hi <= t[2] then return t[1], 0, t[2] end
    end
    return "uint64_t", 0, -1            -- -1: 2^64 - 1 as unsigned
  end
  for _, t in ipairs(SIGNED) do
    if lo >= t[2] and hi <= t[3] then return t[1], t[2], t[3] end
  end
  return "int64_t", math.mininteger, math.maxinteger
end

-- The integer range a field's C value holds, by kind.
function M.range(f)
  if f.kind == "uint" then
    return 0, f.bits == 64 and -1 or (1 << f.bits) - 1
  end
  return f.min, f.max
end

-- The C tests that integer 'x', of field 'f''s C type, is below 'lo' and
-- above 'hi': nil where that type cannot hold such a value. A uint64_t
-- (thi -1: 2^64 - 1) holds values past any 'hi' but its own top.
local function outside(x, f, lo, hi)
  local _, tlo, thi = M.inttype(M.range(f))
  local above
  if thi == -1 then
    above = math.ult(hi, -1) and fmt("%s > %s", x, M.uint(hi)) or nil
  elseif hi < thi then
    above = fmt("%s > %s", x, M.int(hi))
  end
  return lo ~= 0 and lo > tlo and fmt("%s < %s", x, M.int(lo)) or nil, above
end

-- What the driver sends for 'x', a C expression of the C type of int,
-- tiered, enum or uint field 'f': the expression written, and the C
-- condition on which the driver refuses the value (nil: never). An int
-- with 'clamp' sends a value out of [min, max] as the nearest end; 'lo',
-- 'hi' narrow [f.min, f.max] (a count of at least 'lo'). The one rule for
-- gen c and serialize-h.
function M.intsend(f, x, lo, hi)
  if f.kind == "enum" then return x, fmt("(unsigned)%s > %du", x, #f.values - 1) end
  if f.kind == "uint" then
    local _, _, thi = M.inttype(M.range(f))
    -- thi -1: a uint64_t, whose 64 bits pass any width below 64
    if (thi == -1 and 64 or M.bitlen(thi)) > f.bits then
      return x, fmt("(uint64_t)%s >> %d != 0", x, f.bits)
    end
    return x, nil
  end
  lo, hi = lo or f.min, hi or f.max
  local below, above = outside(x, f, lo, hi)
  if not f.clamp then
    return x, below and above and below .. " || " .. above or below or above
  end
  local v = x
  if above then v = fmt("%s ? %s : %s", above, M.int(hi), v) end
  if below then v = fmt("%s ? %s : %s", below, M.int(lo), v) end
  return v == x and x or "(" .. v .. ")", nil
end

-- Kinds whose element needs a struct of its own (a count, a mask): arrays
-- too when fixed, so an array element is always `x[i].v[...]`, at any depth.
local function compound(f)
  return f.kind == "array" or f.kind == "sparse"
    or f.kind == "bytes" and not f.fixed
end
M.compound = compound

-- The program's types in an order where each comes after the ones it
-- contains (C needs a struct declared before it is embedded).
function M.order(program)
  local out, seen = {}, {}
  local function visitfield(f)
    if f.kind == "struct" then M.visit(program.byname[f.type], visitfield,
                                       out, seen)
    elseif f.of then visitfield(f.of) end
  end
  for _, t in ipairs(program.types) do M.visit(t, visitfield, out, seen) end
  return out
end

function M.visit(t, visitfield, out, seen)
  if seen[t] then return end
  seen[t] = true
  for _, f in ipairs(t.fields) do visitfield(f) end
  out[#out + 1] = t
end

-- The program of 'schema' at 'version' (default: the current one); the
-- generators write code for one version, as a protocol peer speaks one.
-- The versions are those s:encode takes (core.limits): past the highest
-- any field names, the layout is that highest one's.
function M.program(schema, version)
  local program = schema:program()
  if version ~= nil then
    local max = require("bitwire.core").limits.version
    if math.type(version) ~= "integer" or version < 0 or version > max then
      error(string.format("bitwire.gen: version must be an integer in [0, %d], got %s",
        max, tostring(version)), 0)
    end
    program.version = version
  end
  return program
end

-- The message id of type 't' (nil when it is not a message) and the number
-- of message ids: with a `messages` list only the listed types are
-- messages, numbered by it; without one, every type by its index.
function M.msgid(program, t)
  if program.messages and #program.messages > 0 then return t.message_id end
  return t.id
end

function M.nmessages(program)
  if program.messages and #program.messages > 0 then return #program.messages end
  return #program.types
end

-- Fields of type 't' on the wire at the program's version.
function M.fields(program, t)
  local out = {}
  for _, f in ipairs(t.fields) do
    if f.since <= program.version
       and (f.removed == nil or program.version < f.removed) then
      out[#out + 1] = f
    end
  end
  return out
end

-- Names a generated name may not be, with why. Macros and typedefs break
-- a struct member too (a member 'size_t' is an error in C++, which includes
-- the headers), so they are refused everywhere: those of the headers the
-- generated code includes (stddef, stdint, stdbool, string) and of the
-- ones a program beside it is bound to include (stdio, stdlib, errno,
-- math, limits, assert). Functions of string.h, which the generated code
-- includes, and of stdio.h and stdlib.h, which the program beside it is
-- bound to include, are refused at file scope only (a type 'exit' is an
-- error there); other headers' functions (a type 'log') are left to the
-- user, as C compiles them until included.
local LIBNAME = "a C library name"
local RESERVED, FILESCOPE = {}, {}
local function reserve(set, words)
  for w in words:gmatch("[%w_]+") do set[w] = LIBNAME end
end
reserve(RESERVED, [[size_t ptrdiff_t wchar_t max_align_t NULL offsetof
  intmax_t uintmax_t intptr_t uintptr_t INTMAX_MIN INTMAX_MAX UINTMAX_MAX
  INTPTR_MIN INTPTR_MAX UINTPTR_MAX PTRDIFF_MIN PTRDIFF_MAX SIZE_MAX
  SIG_ATOMIC_MIN SIG_ATOMIC_MAX WCHAR_MIN WCHAR_MAX WINT_MIN WINT_MAX
  INTMAX_C UINTMAX_C FILE fpos_t EOF BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam
  SEEK_SET SEEK_CUR SEEK_END TMP_MAX stdin stdout stderr div_t ldiv_t
  lldiv_t EXIT_SUCCESS EXIT_FAILURE RAND_MAX MB_CUR_MAX errno EDOM ERANGE
  EILSEQ assert float_t double_t INFINITY NAN HUGE_VAL HUGE_VALF HUGE_VALL
  FP_NAN FP_INFINITE FP_ZERO FP_SUBNORMAL FP_NORMAL FP_ILOGB0 FP_ILOGBNAN
  MATH_ERRNO MATH_ERREXCEPT math_errhandling M_PI M_E CHAR_BIT CHAR_MIN
  CHAR_MAX SCHAR_MIN SCHAR_MAX UCHAR_MAX SHRT_MIN SHRT_MAX USHRT_MAX INT_MIN
  INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX LLONG_MIN LLONG_MAX
  ULLONG_MAX MB_LEN_MAX]])
for _, n in ipairs { 8, 16, 32, 64 } do
  for _, k in ipairs { "", "_least", "_fast" } do
    local K = k:upper()
    reserve(RESERVED, fmt("int%s%d_t uint%s%d_t INT%s%d_MIN INT%s%d_MAX UINT%s%d_MAX",
      k, n, k, n, K, n, K, n, K, n))
  end
  reserve(RESERVED, fmt("INT%d_C UINT%d_C", n, n))
end
-- string.h's functions, with the POSIX ones glibc's string.h declares
reserve(FILESCOPE, [[memcpy memmove memset memcmp memchr strcpy strncpy strcat
  strncat strcmp strncmp strcoll strxfrm strchr strrchr strspn strcspn
  strpbrk strstr strtok strerror strlen strdup strndup strnlen stpcpy
  stpncpy strtok_r strsep strsignal memccpy strcasecmp strncasecmp index
  rindex bcmp bcopy bzero ffs]])
-- stdio.h's and stdlib.h's, with the POSIX ones glibc declares by default
reserve(FILESCOPE, [[remove rename tmpfile tmpnam fclose fflush fopen freopen
  setbuf setvbuf fprintf fscanf printf scanf snprintf sprintf sscanf
  vfprintf vfscanf vprintf vscanf vsnprintf vsprintf vsscanf fgetc fgets
  fputc fputs getc getchar gets putc putchar puts ungetc fread fwrite
  fgetpos fseek fsetpos ftell rewind clearerr feof ferror perror fileno
  fdopen popen pclose getline getdelim dprintf ftello fseeko atof atoi atol
  atoll strtod strtof strtold strtol strtoll strtoul strtoull rand srand
  calloc free malloc realloc abort atexit exit _Exit getenv system bsearch
  qsort abs labs llabs div ldiv lldiv mblen mbtowc wctomb mbstowcs wcstombs
  random srandom setenv unsetenv putenv mkstemp realpath posix_memalign]])

-- Why C would not take 'name' as ours (nil: it would); 'member': as a
-- struct member, where only macros and type names get in the way.
local function unusable(name, member)
  if name:match("^__") or name:match("^_%u") then
    return "names C reserves (__ or _ and a capital letter)"
  end
  if name:match("^bw_") or name:match("^BW_") then
    return "the generated code's runtime (bw_ and BW_ names)"
  end
  return RESERVED[name] or not member and FILESCOPE[name] or nil
end

-- The C names a generator hands out, each with what it stands for in the
-- description ("type 'Pos'", "field 'Pos.x'"): claim(name, what [, scope])
-- returns 'name', and raises when something else holds it in 'scope' (a
-- struct's members; nil: file scope), or C or its headers do (unusable),
-- as C would not compile both.
function M.names()
  local held = {}
  return function(name, what, scope)
    local why = unusable(name, scope ~= nil)
    if why then
      error(fmt("bitwire.gen: %s clashes with %s ('%s'%s)%s", what, why, name,
        scope and " in struct " .. scope or "",
        -- a name of other bytes ('été' is '__t__'): say how it got there
        what:find("[\128-\255]") and "; in C, bytes other than letters, digits"
          .. " and _ become _" or ""), 0)
    end
    local key = (scope or "") .. " " .. name
    local had = held[key]
    if had ~= nil and had ~= what then
      error(fmt("bitwire.gen: %s and %s both become the C name '%s'%s", had, what,
        name, scope and " in struct " .. scope or ""), 0)
    end
    held[key] = what
    return name
  end
end

-- 'prefix' (nil: none), checked: it starts every type's C name, so it
-- must be a C identifier; what it makes is then claimed as any name is.
function M.checkprefix(prefix)
  if prefix == nil then return "" end
  if type(prefix) ~= "string" or not (prefix == "" or prefix:match("^[%a_][%w_]*$")) then
    error(fmt("bitwire.gen: prefix '%s' is not a C identifier (letters, digits"
      .. " and _, not starting with a digit)", tostring(prefix)), 0)
  end
  return prefix
end

-- A new naming context: 'prefix' goes before every type name. N.claim
-- (M.names) holds every name; N.owners[owner] says which field an owner
-- name ("Pos_x", which names a field's enum, constants and helpers) is.
function M.new(program, prefix)
  prefix = M.checkprefix(prefix)
  local N = { program = program, prefix = prefix, helpers = {},
              enums = {}, done = {}, claim = M.names(), owners = {}, items = {} }
  return setmetatable(N, { __index = M })
end

function M:typename(name)
  return self.claim(self.prefix .. M.ident(name), fmt("type '%s'", name))
end

-- The owner name of field 'f' of type 't' (see M.new).
function M:owner(t, f)
  local owner = self:typename(t.name) .. "_" .. M.ident(f.name or "")
  if f.name then self.owners[owner] = fmt("field '%s.%s'", t.name, f.name) end
  return owner
end

-- The field that owner name 'owner' stands for, and a claim of 'name' made
-- of it (see M.new).
function M:what(owner)
  return self.owners[owner] or fmt("'%s'", owner)
end
-- The count 'x' of a field counting up to 'max' (its C type inttype(0,
-- max)), read no further than 'max'; and the C condition on which a writer
-- refuses it, below 'min' or past 'max' (nil: never). A test its C type
-- makes always true or false is left out (-Wtype-limits warns of it: a
-- uint8_t count of an array of max 255).
function M.countcap(x, max)
  local _, _, thi = M.inttype(0, max)
  if thi ~= -1 and max >= thi then return x end
  return fmt("(%s <= %d ? %s : %d)", x, max, x, max)
end

function M.countbad(x, min, max)
  local _, bad = M.intsend({ kind = "int", min = 0, max = max }, x, min, max)
  return bad
end

function M:ownclaim(name, owner)
  return self.claim(name, self:what(owner))
end

-- Buffer length for a count of at most 'max' (C has no empty arrays).
local function cap(max) return max > 0 and max or 1 end
M.cap = cap

-- The C element type of 'e' (the element of an array or sparse field
-- 'owner_name'), and the array suffix it needs ("[17]" for a string);
-- compound elements become helper structs declared in self.helpers.
function M:elemtype(e, owner)
  if e.kind == "string" then return "char", fmt("[%d]", e.max + 1) end
  if e.kind == "quat" then return "float", "[4]" end
  if e.kind == "bytes" and e.fixed then return "uint8_t", fmt("[%d]", cap(e.max)) end
  if compound(e) then
    local name = owner .. "_item"
    if not self.done[name] then
      self.done[name] = true
      self.owners[name] = self.owners[owner]
      self.items[name] = true
      self.claim(name, "the elements of " .. self:what(owner))
      local lines = {}
      self:members(e, "v", name, lines, name)
      self.helpers[#self.helpers + 1] = fmt("typedef struct %s {\n%s} %s;\n",
        name, table.concat(lines), name)
    end
    return name, ""
  end
  return self:scalartype(e, owner), ""
end

-- The C type of a scalar field (or a struct).
function M:scalartype(f, owner)
  local k = f.kind
  if k == "bool" then return "bool" end
  if k == "float" or k == "float32" then return "float" end
  -- double: the driver decodes an angle to a Lua number, a double
  if k == "float64" or k == "angle" then return "double" end
  if k == "struct" then return self:typename(f.type) end
  if k == "enum" then
    -- an element of an element struct's array: not that struct's name
    local name = self.items[owner] and owner .. "_enum" or owner
    if not self.done[name] then
      self.done[name] = true
      self.claim(name, "the enum of " .. self:what(owner))
      local items = {}
      for i, v in ipairs(f.values) do
        items[i] = fmt("  %s = %d", self.claim(fmt("%s_%s", name, M.ident(v)),
          fmt("value '%s' of %s", v, self:what(owner))), i - 1)
      end
      self.enums[#self.enums + 1] = fmt("typedef enum %s {\n%s\n} %s;\n",
        name, table.concat(items, ",\n"), name)
    end
    return name
  end
  if k == "int" or k == "uint" or k == "tiered" then
    return (M.inttype(M.range(f)))
  end
  error(fmt("bitwire.gen: field kind '%s' is not supported", tostring(k)), 0)
end

-- The wire form of field 'f', for comments.
function M.wire(f)
  local k, s = f.kind
  if k == "int" then s = fmt("int [%d, %d], %d bits", f.min, f.max, f.bits)
  elseif k == "uint" then s = fmt("uint, %d bits", f.bits)
  elseif k == "bool" then s = "bool, 1 bit"
  elseif k == "float" then
    s = fmt("float [%.9g, %.9g] in 0..%d, %d bits", f.fmin, f.fmax, f.qmax,
      M.bitlen(f.qmax))
  elseif k == "float32" then s = "float32, 32 bits"
  elseif k == "float64" then s = "float64, 64 bits"
  elseif k == "angle" then s = fmt("angle, period %.17g, %d bits", f.period, f.bits)
  elseif k == "enum" then s = fmt("enum of %d, %d bits", #f.values, f.bits)
  elseif k == "string" then s = fmt("string, length <= %d in %d bits, aligned bytes", f.max, f.bits)
  elseif k == "bytes" then
    s = f.fixed and fmt("bytes, %d aligned", f.max)
      or fmt("bytes, length [%d, %d] in %d bits, aligned", f.min, f.max, f.bits)
  elseif k == "array" then
    s = f.fixed and fmt("array of %d %s", f.max, M.wire(f.of))
      or fmt("array, count [%d, %d] in %d bits, of %s", f.min, f.max, f.bits, M.wire(f.of))
  elseif k == "struct" then s = f.type
  elseif k == "sparse" then
    s = fmt("sparse, slots 1..%d, %s encoding, of %s", f.max, f.encoding, M.wire(f.of))
  elseif k == "quat" then s = fmt("quat, 2 + 3 x %d bits", f.bits)
  elseif k == "tiered" then
    s = fmt("tiered [%d, %d], tiers {%s}", f.min, f.max, table.concat(f.tiers, ", "))
  elseif k == "align" then s = "align"
  elseif k == "check" then s = fmt("check 0x%08x", f.magic)
  else s = k end
  if f.relative then   -- WIRE.md, "Relative differences"
    s = fmt("%s; delta relative, tiers {%s}", s, table.concat(f.tiers, ", "))
  end
  if f.optional then s = "optional " .. s end
  return s
end

-- Append the member declarations of field 'f' named 'name' to 'lines' of
-- struct 'struct'; 'owner' names helper types ("Entity_tags").
function M:members(f, name, owner, lines, struct)
  local k = f.kind
  local add = function(s, ...) lines[#lines + 1] = "  " .. fmt(s, ...) .. "\n" end
  local function member(m) return self.claim(m, self:what(owner), struct) end
  if k == "align" or k == "check" then return end
  add("/* %s */", M.wire(f))
  name = member(name)
  if f.optional then add("bool %s;", member("has_" .. name)) end
  if k == "string" then add("char %s[%d];", name, f.max + 1)
  elseif k == "quat" then add("float %s[4];  /* x, y, z, w */", name)
  elseif k == "bytes" then
    if not f.fixed then add("%s %s;", (M.inttype(0, f.max)), member(name .. "_count")) end
    add("uint8_t %s[%d];", name, cap(f.max))
  elseif k == "array" or k == "sparse" then
    local et, suffix = self:elemtype(f.of, owner)
    if k == "sparse" then
      add("uint8_t %s[%d];  /* bit i: slot i + 1 is set */", member(name .. "_present"),
        (f.max + 7) // 8)
    elseif not f.fixed then
      add("%s %s;", (M.inttype(0, f.max)), member(name .. "_count"))
    end
    add("%s %s[%d]%s;", M.tagged(f.of, et), name, cap(f.max), suffix)
  else
    add("%s %s;", M.tagged(f, self:scalartype(f, owner)), name)
  end
end

-- A member's type 'ctype' of field 'f' as "struct X" or "enum X": C++
-- refuses a member named like a type its class used by the bare name
-- ("changes meaning"); the tag names the type whatever the members are.
function M.tagged(f, ctype)
  if f.kind == "enum" then return "enum " .. ctype end
  if f.kind == "struct" or compound(f) then return "struct " .. ctype end
  return ctype
end

-- The most bytes a generated struct may take: the largest C object on a
-- 32-bit target (PTRDIFF_MAX there), so the code compiles wherever C does
-- and no length (a string's max + 1) wraps.
M.MAXSTRUCT = 0x7fffffff

-- Bytes of a scalar's C type; an enum's is int on the usual ABIs, at
-- most a long long.
local SCALARBYTES = { bool = 1, float = 4, float32 = 4, float64 = 8, angle = 8,
                      enum = 8 }
local function scalarbytes(f)
  if SCALARBYTES[f.kind] then return SCALARBYTES[f.kind] + 0.0 end
  return tonumber((M.inttype(M.range(f))):match("%d+")) / 8  -- int, uint, tiered
end

local structbytes

-- The most bytes an element 'e' of an array takes in C.
local function elembytes(program, e, memo)
  if e.kind == "string" then return e.max + 1.0 end
  if e.kind == "quat" then return 16.0 end
  if e.kind == "bytes" and e.fixed then return cap(e.max) + 0.0 end
  if compound(e) then return M.fieldbytes(program, e, memo) + 7 end
  if e.kind == "struct" then return structbytes(program, program.byname[e.type], memo) end
  return scalarbytes(e)
end

-- The most bytes C can give the members of field 'f' as M:members
-- declares them, each with up to 7 bytes of padding before it (a float:
-- counts up to 2^63 multiply without wrapping); 'memo' holds structs'.
function M.fieldbytes(program, f, memo)
  local k, n = f.kind, f.optional and 8.0 or 0.0
  if k == "align" or k == "check" then return 0.0 end
  if k == "string" then return n + f.max + 8.0 end
  if k == "quat" then return n + 23.0 end
  if k == "bytes" then return n + (f.fixed and 0 or 15) + cap(f.max) + 7.0 end
  if k == "array" or k == "sparse" then
    n = n + (k == "sparse" and (f.max + 7.0) // 8 + 7 or f.fixed and 0 or 15)
    return n + cap(f.max) * elembytes(program, f.of, memo) + 7
  end
  if k == "struct" then return n + structbytes(program, program.byname[f.type], memo) + 7 end
  return n + scalarbytes(f) + 7
end

function structbytes(program, t, memo)
  if memo[t] == nil then
    local n = 1.0
    for _, f in ipairs(M.fields(program, t)) do
      if f.name then n = n + M.fieldbytes(program, f, memo) end
    end
    memo[t] = n + 7
  end
  return memo[t]
end

-- The struct declaration of type 't'.
function M:struct(t)
  local lines, name = {}, self:typename(t.name)
  local size = 0.0
  self.sizes = self.sizes or {}
  for _, f in ipairs(M.fields(self.program, t)) do
    if f.name then
      size = size + M.fieldbytes(self.program, f, self.sizes)
      if size > M.MAXSTRUCT then
        error(fmt("bitwire.gen: field '%s.%s' can make struct %s larger than %d "
          .. "bytes (the largest C object on a 32-bit target)", t.name, f.name, name,
          M.MAXSTRUCT), 0)
      end
      local owner = self:owner(t, f)
      self:members(f, M.ident(f.name), owner, lines, name)
    end
  end
  if #lines == 0 then lines[1] = "  char unused;  /* no fields on the wire */\n" end
  return fmt("typedef struct %s {\n%s} %s;\n", name, table.concat(lines), name)
end

-- Every declaration, in order: enums, helper structs and structs.
function M:declarations()
  local parts = {}
  for _, t in ipairs(M.order(self.program)) do
    local s = self:struct(t)
    for _, e in ipairs(self.enums) do parts[#parts + 1] = e end
    for _, h in ipairs(self.helpers) do parts[#parts + 1] = h end
    self.enums, self.helpers = {}, {}
    parts[#parts + 1] = s
  end
  return table.concat(parts, "\n")
end

return M
