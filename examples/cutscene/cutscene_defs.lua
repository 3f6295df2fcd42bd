-- The cutscene of "Serialization For Games" (seeds/004): a list of commands,
-- each a type and the parameters that type uses. The JSON is the article's,
-- unchanged: a parameter a command does not use is an absent optional.
return {
  Command = {
    {"type", "enum", values = {"fade", "move_entity", "dialogue"}},
    -- fade
    {"start", "float32", optional = true},
    {"end", "float32", optional = true},
    {"duration", "float32", optional = true},
    -- move_entity
    {"x", "int", min = -32768, max = 32767, optional = true},
    {"y", "int", min = -32768, max = 32767, optional = true},
    {"instant", "bool", optional = true},
    {"entity_name", "string", max = 64, optional = true},
    -- dialogue
    {"text", "string", max = 4096, optional = true},
  },
  Cutscene = {
    {"scene", "string", max = 64},
    {"commands", "array", of = "Command", max = 1024},
  },
}
