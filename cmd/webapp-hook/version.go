package main

import "runtime/debug"

// Set with -ldflags -X by builds without VCS stamping, such as the image's (hack/image), which
// builds with -buildvcs=false so that the binary's bytes depend on the commit alone and the
// Dockerfile, which has no .git to read, can stamp the same way.
var (
	// buildVersion is the module version, a tag or a pseudo-version such as
	// v0.0.0-20260101120000-0123456789ab (with +dirty for a modified tree).
	buildVersion string
	// buildRevision is the commit the binary was built from.
	buildRevision string
	// buildTime is the commit's time, in RFC 3339.
	buildTime string
	// buildModified is "true" when the tree differed from the commit.
	buildModified string
)

// version describes the binary from its build information: module version, VCS revision and
// time, and whether the tree was modified; "(devel)" and "unknown" where the build did not record them.
func version() string {
	info, _ := debug.ReadBuildInfo() // nil when the binary carries none
	return describeVersion(info, map[string]string{
		"version": buildVersion, "vcs.revision": buildRevision, "vcs.time": buildTime, "vcs.modified": buildModified,
	})
}

// describeVersion is version's text for a binary's build information (nil: none) and the values
// stamped with -ldflags, keyed as the VCS settings of build information; stamped values stand in
// for the ones the build information lacks.
func describeVersion(info *debug.BuildInfo, stamped map[string]string) string {
	if info == nil && stamped["vcs.revision"] == "" {
		return "webapp-hook unknown"
	}
	settings := map[string]string{}
	mainVersion, goVersion := "(devel)", "unknown"
	if info != nil {
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		mainVersion, goVersion = info.Main.Version, info.GoVersion
	}
	if settings["vcs.revision"] == "" && stamped["vcs.revision"] != "" {
		for _, k := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
			settings[k] = stamped[k]
		}
		if v := stamped["version"]; v != "" {
			mainVersion = v
		}
	}
	v := "webapp-hook " + mainVersion
	if rev := settings["vcs.revision"]; rev != "" {
		v += " revision " + rev
		if settings["vcs.modified"] == "true" {
			v += " (modified)"
		}
		if t := settings["vcs.time"]; t != "" {
			v += " " + t
		}
	}
	return v + " " + goVersion
}
