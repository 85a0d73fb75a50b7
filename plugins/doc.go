// Package plugins holds the Krew manifest of kubectl webapp: its template, webapp.yaml.tmpl,
// which make plugin fills into webapp.yaml with the sha256 of each archive it builds in
// bin/plugin/, and the tests that check the template, and the filled manifest against the
// archives. It has no code of its own.
package plugins
