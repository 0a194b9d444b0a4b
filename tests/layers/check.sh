#!/bin/sh
# make check: the layer rule of docs/design.md on the tree's #include lines.
exec "${PYTHON:-python3}" "${SRCDIR:-$(dirname "$0")/../..}/tests/layers/check_layers.py" \
	"${SRCDIR:-$(dirname "$0")/../..}"
