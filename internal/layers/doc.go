// Package layers holds no code: its test reads the import graph of
// perflab's packages (go list -deps) and fails when an arrow points the
// wrong way, so that the layering docs/layout.md describes cannot
// regress unseen.
package layers
