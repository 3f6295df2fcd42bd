-- Checks rockspecs/bitwire-scm-1.rockspec against the build: its C sources
-- must be the Makefile's CORE_SRC and BIND_SRC (in any order), and its Lua
-- modules every lua/bitwire/**.lua file, each under its module name.
-- usage: lua5.4 tools/check_rockspec.lua "<CORE_SRC BIND_SRC>"   (make does it)
local spec = {}
local chunk = assert(loadfile("rockspecs/bitwire-scm-1.rockspec", "t", spec))
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

local files = {}
local p = assert(io.popen("find lua -name '*.lua' | sort"))
for path in p:lines() do files[#files + 1] = path end
p:close()
local listed = {}
for name, path in pairs(spec.build.modules) do
  if type(path) == "string" then listed[path] = name end
end
for _, path in ipairs(files) do
  local mod = path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  if listed[path] == nil then problem("no module for %s (%s)", path, mod)
  elseif listed[path] ~= mod then problem("%s is listed as %s, not %s", path, listed[path], mod) end
  listed[path] = nil
end
for path in pairs(listed) do problem("module file %s does not exist", path) end
if spec.build.install.bin.bitwire ~= "bin/bitwire" then problem("install.bin lacks bitwire") end

if #problems > 0 then
  for _, m in ipairs(problems) do io.stderr:write("rockspec: ", m, "\n") end
  os.exit(1)
end
print(string.format("rockspec: %d C sources and %d Lua modules match the build",
  #core.sources, #files))
