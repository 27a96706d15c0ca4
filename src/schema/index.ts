// schema/ owns kiwi's file formats as TypeBox schemas (the single source of their types) and the
// table that generates schemas/*.schema.json; it must not read files or validate trees itself.
