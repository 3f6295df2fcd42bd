-- luacheck settings for `make lint`
std = "lua54"
max_line_length = 120
self = false          -- methods may leave 'self' unused
ignore = { "581" }    -- 'not (x < y)' is deliberate where NaN must fail
files["spec"] = { std = "+busted" }
exclude_files = {
  "spec/fixtures/defs/*",              -- broken and hostile on purpose
  "spec/fixtures/serialize_sample.lua", -- the reference vectors, as given
}
