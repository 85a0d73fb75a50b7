//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	gosync "sync"
	"testing"
	"time"
)

// timeline records the moments of one scenario, relative to its start, for t.Logf as they happen
// and for the suite's closing summary (printTimelines), which the real-pod scenarios' reports quote.
type timeline struct {
	name  string
	start time.Time
	marks []string
}

var (
	timelinesMu gosync.Mutex
	timelines   []*timeline
)

// newTimeline starts the timeline of t's scenario now.
func newTimeline(t *testing.T) *timeline {
	tl := &timeline{name: t.Name(), start: time.Now()}
	timelinesMu.Lock()
	timelines = append(timelines, tl)
	timelinesMu.Unlock()
	return tl
}

// mark records what happened now, and logs it.
func (tl *timeline) mark(t *testing.T, format string, args ...any) time.Duration {
	t.Helper()
	d := time.Since(tl.start)
	line := fmt.Sprintf("%6.1fs  %s", d.Seconds(), fmt.Sprintf(format, args...))
	timelinesMu.Lock()
	tl.marks = append(tl.marks, line)
	timelinesMu.Unlock()
	t.Logf("timeline %s", line)
	return d
}

// timelinesFile is where printTimelines also writes them: go test shows a passing package's
// output only with -v, and make e2e runs without it.
const timelinesFile = "../bin/e2e-timelines.txt"

// printTimelines prints every recorded timeline on stderr, at the end of the suite, and writes
// them to timelinesFile.
func printTimelines() {
	timelinesMu.Lock()
	defer timelinesMu.Unlock()
	if len(timelines) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "e2e: timelines of the real-pod scenarios (%s):\n", time.Now().UTC().Format(time.RFC3339))
	for _, tl := range timelines {
		fmt.Fprintf(&b, "  %s\n", tl.name)
		for _, m := range tl.marks {
			fmt.Fprintf(&b, "    %s\n", m)
		}
	}
	fmt.Fprint(os.Stderr, b.String())
	os.WriteFile(timelinesFile, []byte(b.String()), 0o644)
}
