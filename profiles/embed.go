package profiles

import "embed"

// embeddedTables holds NVIDIA aiconfigurator's operator tables (Apache-2.0,
// LICENSE alongside), copied unchanged from shared/data/profiles/aiconfigurator:
// <system>/{gemm,attention,moe,comm}/<framework>/<version>/*.parquet and the
// <system>.yaml hardware files. Embedded so the binary runs from any directory.
//
//go:embed data/aiconfigurator
var embeddedTables embed.FS

// embeddedTablesRoot is the aiconfigurator folder inside embeddedTables.
const embeddedTablesRoot = "data/aiconfigurator"

// embeddedModels holds HuggingFace config.json files, one folder per model
// (models/<short-name>/config.json), copied from shared/data/models.
//
//go:embed models
var embeddedModels embed.FS
