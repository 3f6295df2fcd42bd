-- Which core.so a run of the specs tests: the one its step built. The
-- sanitized run names its build in BITWIRE_CORE; busted puts .busted's
-- cpath (./build) first unless told otherwise, and a run that loaded the
-- plain build there would pass while checking nothing it was meant to.
describe("a run of the specs", function ()
  it("loads the core.so it was started to test", function ()
    local want = os.getenv("BITWIRE_CORE") or "./build/bitwire/core.so"
    assert.equal(want, package.searchpath("bitwire.core", package.cpath))
  end)
end)
