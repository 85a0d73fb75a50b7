package screen

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/duration"
)

// DefaultWidth is a screen's width when Options.Width is 0.
const DefaultWidth = 80

// Options say how a screen is drawn.
type Options struct {
	// Width is the screen's width in columns, DefaultWidth when 0: long messages wrap to it.
	Width int
	// Color marks phases, results and the current step with ANSI colours.
	Color bool
}

func (o Options) width() int {
	if o.Width <= 0 {
		return DefaultWidth
	}
	return o.Width
}

// tone is the colour of a word on the screen.
type tone int

const (
	plain tone = iota
	good       // green: Ready, Passed, Promoted, True
	busy       // yellow: Progressing, Paused, Promoting, Inconclusive
	bad        // red: Degraded, Aborted, Failed
	mark       // bold: the current step, headings
)

// paint is s in tone t when the screen is in colour.
func (o Options) paint(s string, t tone) string {
	if !o.Color || t == plain || s == "" {
		return s
	}
	code := map[tone]string{good: "32", busy: "33", bad: "31", mark: "1"}[t]
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// cell is one cell of a table: its text, and its colour.
type cell struct {
	text string
	tone tone
}

func c(text string) cell          { return cell{text: text} }
func ct(text string, t tone) cell { return cell{text, t} }

// table writes rows as columns two spaces apart, each row indented by indent, padding by the
// text alone so that colours do not shift the columns. The last cell of a row is not padded.
func (o Options) table(w io.Writer, indent string, rows [][]cell) {
	var widths []int
	for _, r := range rows {
		for i, cl := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cl.text))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, cl := range r {
			b.WriteString(o.paint(cl.text, cl.tone))
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cl.text)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// field writes a labelled line, "label  value", the value wrapped to the width under itself.
func (o Options) field(w io.Writer, label, value string, t tone) {
	const labelWidth = 10
	head := "  " + label + strings.Repeat(" ", max(1, labelWidth-len(label)))
	lines := wrap(value, o.width()-len(head))
	for i, l := range lines {
		if i == 0 {
			fmt.Fprintln(w, head+o.paint(l, t))
			continue
		}
		fmt.Fprintln(w, strings.Repeat(" ", len(head))+o.paint(l, t))
	}
}

// note writes text wrapped to the width, each line indented by indent.
func (o Options) note(w io.Writer, indent, text string) {
	for _, l := range wrap(text, o.width()-len(indent)) {
		fmt.Fprintln(w, indent+l)
	}
}

// wrap breaks text into lines of at most width runes at spaces; a word longer than width stays
// whole on a line of its own.
func wrap(text string, width int) []string {
	width = max(width, 20)
	var lines []string
	var line strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		wl := utf8.RuneCountInString(word)
		if n > 0 && n+1+wl > width {
			lines = append(lines, line.String())
			line.Reset()
			n = 0
		}
		if n > 0 {
			line.WriteByte(' ')
			n++
		}
		line.WriteString(word)
		n += wl
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// age is how long ago t was, as kubectl prints ages; "-" when t is zero.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t))
}

// clock is t's UTC time of day, with how long ago it was: "10:04:15Z (15s ago)".
func clock(now, t time.Time) string {
	return t.UTC().Format("15:04:05Z") + " (" + age(now, t) + " ago)"
}

// seconds is a count of seconds as a duration: "1m0s", "2h0m0s".
func seconds(n int32) string { return (time.Duration(n) * time.Second).String() }
