// Package screen draws what kubectl webapp shows: the screen of get, the one screen that tells a
// WebApp's whole story, and the table of list.
//
// Each is a pure function of plain values, a Story (the WebApp, its Deployments and pods, and the
// time they were read) or a list of WebApps, so that golden files test it. Their fixtures are
// Recordings: Stories as the e2e suite writes them to plugin/testdata/recorded, or, for a case
// it has not recorded yet, as seeded from examples/ in plugin/testdata/seeded. A screen fits 80
// columns, and uses colour only when asked to (Options.Color), which kubectl webapp does on a
// terminal without NO_COLOR.
package screen
