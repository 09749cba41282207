#!/usr/bin/env bash
# Regenerates the README's "Looking at a run" pictures in docs/pictures/
# (never edit them by hand; TestREADMEPicturesAreCurrent checks them). The
# run they show is pictureArgs in cmd/frontier/pictures_test.go.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f docs/pictures/*.png docs/pictures/*.svg docs/pictures/timeline.csv
UPDATE_PICTURES=1 go test ./cmd/frontier -run '^TestREADMEPicturesAreCurrent$' -count=1
ls -la docs/pictures
