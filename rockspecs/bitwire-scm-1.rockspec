-- luarocks make rockspecs/bitwire-scm-1.rockspec   (from a checkout)
-- The C sources and Lua modules below must match the Makefile's CORE_SRC,
-- BIND_SRC and lua/ tree: tools/check_rockspec.lua (make test) compares them.
rockspec_format = "3.0"
package = "bitwire"
version = "scm-1"
source = {
  url = "git+https://github.com/bitwire/bitwire.git",
}
description = {
  summary = "Bit-packing serialization for game packets: a C core driven by Lua schemas",
  detailed = [[
    Packet descriptions are plain Lua tables compiled once by a C driver;
    the wire format is byte-compatible with serialize.h. Includes the
    `bitwire` command (check, layout, cost, dissect, encode/decode JSON,
    diff, fingerprint, Wireshark dissectors).
  ]],
  license = "MIT",
  labels = { "serialization", "networking", "games" },
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
test_dependencies = {
  "busted",
  "lua-cjson",
}
external_dependencies = {
  ZLIB = { header = "zlib.h", library = "z" },
}
build = {
  type = "builtin",
  modules = {
    ["bitwire.core"] = {
      sources = {
        "core/bw_stream.c",
        "core/bw_schema.c",
        "core/bw_compile.c",
        "core/bw_game.c",
        "core/bw_gen.c",
        "core/bw_blob.c",
        "core/bw_bloblayout.c",
        "core/bw_handle.c",
        "core/bw_compilefield.c",
        "core/bw_compileopt.c",
        "core/bw_frame.c",
        "bindings/lbw.c",
        "bindings/lbw_path.c",
        "bindings/lbw_equal.c",
        "bindings/lbw_encode.c",
        "bindings/lbw_decode.c",
        "bindings/lbw_compile.c",
        "bindings/lbw_methods.c",
        "bindings/lbw_options.c",
        "bindings/lbw_frame.c",
        "bindings/lbw_share.c",
        "bindings/lbw_program.c",
        "bindings/lbw_blob.c",
        "bindings/lbw_blobread.c",
        "bindings/lbw_sandbox.c",
        "bindings/lbw_sandboxcopy.c",
        "bindings/lbw_readdefs.c",
        "bindings/lbw_claims.c",
        "bindings/lbw_flat.c",
        "bindings/lbw_decdelta.c",
        "bindings/lbw_into.c",
        "bindings/lbw_encsparse.c",
        "bindings/lbw_encdelta.c",
        "bindings/lbw_tape.c",
        "bindings/lbw_tapeenc.c",
        "bindings/lbw_tapedec.c",
      },
      incdirs = { "core", "bindings", "$(ZLIB_INCDIR)" },
      libdirs = { "$(ZLIB_LIBDIR)" },
      libraries = { "z", "m" },
    },
    ["bitwire.cli"] = "lua/bitwire/cli.lua",
    ["bitwire.cli.blob"] = "lua/bitwire/cli/blob.lua",
    ["bitwire.cli.check"] = "lua/bitwire/cli/check.lua",
    ["bitwire.cli.cost"] = "lua/bitwire/cli/cost.lua",
    ["bitwire.cli.decode"] = "lua/bitwire/cli/decode.lua",
    ["bitwire.cli.diff"] = "lua/bitwire/cli/diff.lua",
    ["bitwire.cli.dissect"] = "lua/bitwire/cli/dissect.lua",
    ["bitwire.cli.encode"] = "lua/bitwire/cli/encode.lua",
    ["bitwire.cli.fingerprint"] = "lua/bitwire/cli/fingerprint.lua",
    ["bitwire.cli.gen"] = "lua/bitwire/cli/gen.lua",
    ["bitwire.cli.layout"] = "lua/bitwire/cli/layout.lua",
    ["bitwire.cli.version"] = "lua/bitwire/cli/version.lua",
    ["bitwire.cli.wireshark"] = "lua/bitwire/cli/wireshark.lua",
    ["bitwire.cliutil"] = "lua/bitwire/cliutil.lua",
    ["bitwire.diff"] = "lua/bitwire/diff.lua",
    ["bitwire.dissect"] = "lua/bitwire/dissect.lua",
    ["bitwire.gen.blob"] = "lua/bitwire/gen/blob.lua",
    ["bitwire.gen.c"] = "lua/bitwire/gen/c.lua",
    ["bitwire.gen.c_delta"] = "lua/bitwire/gen/c_delta.lua",
    ["bitwire.gen.ctypes"] = "lua/bitwire/gen/ctypes.lua",
    ["bitwire.gen"] = "lua/bitwire/gen/init.lua",
    ["bitwire.gen.serialize_h"] = "lua/bitwire/gen/serialize_h.lua",
    ["bitwire"] = "lua/bitwire/init.lua",
    ["bitwire.json"] = "lua/bitwire/json.lua",
    ["bitwire.loader"] = "lua/bitwire/loader.lua",
    ["bitwire.options"] = "lua/bitwire/options.lua",
    ["bitwire.protocol"] = "lua/bitwire/protocol.lua",
    ["bitwire.schema"] = "lua/bitwire/schema.lua",
    ["bitwire.serializer"] = "lua/bitwire/serializer.lua",
    ["bitwire.walk"] = "lua/bitwire/walk.lua",
    ["bitwire.walkcodes"] = "lua/bitwire/walkcodes.lua",
    ["bitwire.wireshark"] = "lua/bitwire/wireshark.lua",
  },
  install = {
    bin = { bitwire = "bin/bitwire" },
  },
}
