-- Checks rockspecs/bitwire-scm-1.rockspec against the build: its C sources
-- must be the Makefile's CORE_SRC and BIND_SRC (in any order), and its Lua
-- modules every lua/bitwire/**.lua file, each under its module name.
-- usage: lua5.4 tools/check_rockspec.lua "<CORE_SRC BIND_SRC>" [--write]
-- (make rock-test checks; make rockspec rewrites the modules from the build)
local ROCKSPEC = "rockspecs/bitwire-scm-1.rockspec"

local function luafiles()
  local files = {}
  local p = assert(io.popen("find lua -name '*.lua' | sort"))
  for path in p:lines() do files[#files + 1] = path end
  p:close()
  return files
end

local function modname(path)
  return (path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", "."))
end

if arg[2] == "--write" then   -- the modules block, from the Makefile and lua/
  local f = assert(io.open(ROCKSPEC))
  local text = f:read("a")
  f:close()
  local out = { '    ["bitwire.core"] = {', "      sources = {" }
  for src in arg[1]:gmatch("%S+") do out[#out + 1] = '        "' .. src .. '",' end
  out[#out + 1] = "      },"
  local a, b = text:find('    %["bitwire%.core"%] = {\n      sources = {.-\n      },\n')
  assert(a, "rockspec: no bitwire.core sources block")
  local head, rest = text:sub(1, a - 1), text:sub(b + 1)
  local _, c = rest:find("\n    },\n")      -- the end of bitwire.core's table
  local d = rest:find("\n  },\n  install = ")  -- the end of the modules
  assert(c and d, "rockspec: no Lua modules block")
  local mods = {}
  for _, path in ipairs(luafiles()) do
    mods[#mods + 1] = string.format('    [%q] = %q,', modname(path), path)
  end
  text = head .. table.concat(out, "\n") .. "\n" .. rest:sub(1, c)
    .. table.concat(mods, "\n") .. rest:sub(d)
  f = assert(io.open(ROCKSPEC, "w"))
  f:write(text)
  f:close()
  print("rockspec: modules rewritten from the Makefile and lua/")
end

local spec = {}
local chunk = assert(loadfile(ROCKSPEC, "t", spec))
chunk()
local problems = {}
local function problem(fmt, ...) problems[#problems + 1] = string.format(fmt, ...) end

local want, have = {}, {}
for src in (arg[1] or ""):gmatch("%S+") do want[src] = true end
local core = spec.build.modules["bitwire.core"]
for _, src in ipairs(core.sources) do have[src] = true end
for src in pairs(want) do
  if not have[src] then problem("bitwire.core lacks %s (in the Makefile)", src) end
end
for src in pairs(have) do
  if not want[src] then problem("bitwire.core lists %s (not in the Makefile)", src) end
end

local files = luafiles()
local listed = {}
for name, path in pairs(spec.build.modules) do
  if type(path) == "string" then listed[path] = name end
end
for _, path in ipairs(files) do
  local mod = modname(path)
  if listed[path] == nil then problem("no module for %s (%s)", path, mod)
  elseif listed[path] ~= mod then problem("%s is listed as %s, not %s", path, listed[path], mod) end
  listed[path] = nil
end
for path in pairs(listed) do problem("module file %s does not exist", path) end
if spec.build.install.bin.bitwire ~= "bin/bitwire" then problem("install.bin lacks bitwire") end

if #problems > 0 then
  for _, m in ipairs(problems) do io.stderr:write("rockspec: ", m, "\n") end
  io.stderr:write("rockspec: `make rockspec` rewrites its modules from the build\n")
  os.exit(1)
end
print(string.format("rockspec: %d C sources and %d Lua modules match the build",
  #core.sources, #files))
