package profiles

import "embed"

//go:generate go run ./internal/rowsgen

// embeddedTables holds NVIDIA aiconfigurator's operator tables (Apache-2.0,
// LICENSE alongside), from shared/data/profiles/aiconfigurator:
// <system>/{gemm,attention,moe,comm}/<framework>/<version>/ and the
// <system>.yaml hardware files. Each table is embedded in its rows form
// (<table>.rows, generated from the <table>.parquet kept beside it by `go
// generate ./profiles`; rows.go), which a run decodes in about a
// millisecond; the parquet files stay in the repository as the source.
// Embedded so the binary runs from any directory.
//
//go:embed data/aiconfigurator/LICENSE data/aiconfigurator/*.yaml
//go:embed data/aiconfigurator/*/*/*/*/*.yaml data/aiconfigurator/*/*/*/*/*.rows
var embeddedTables embed.FS

// embeddedTablesRoot is the aiconfigurator folder inside embeddedTables.
const embeddedTablesRoot = "data/aiconfigurator"

// embeddedModels holds HuggingFace config.json files, one folder per model
// (models/<short-name>/config.json), copied from shared/data/models.
//
//go:embed models
var embeddedModels embed.FS
