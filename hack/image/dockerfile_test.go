package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// dockerStage is what a Dockerfile's stage says of the image it makes, as written.
type dockerStage struct {
	From       string
	User       string
	Entrypoint []string
	Cmd        []string
	// Ports are EXPOSE's, with the protocol: "8080" is "8080/tcp".
	Ports []string
	// Labels are LABEL's, by key, with their values as written (${ARG} unexpanded).
	Labels map[string]string
	// Files are the destinations of COPY and ADD, without the leading slash (a directory's with
	// its trailing one).
	Files []string
	// Runs are the RUN commands, continuation lines joined.
	Runs []string
}

// parseDockerfile reads the stages of a Dockerfile: instructions with their continuation lines
// joined, comments and blank lines skipped. It knows the instructions this project's Dockerfile
// uses, and fails on a form it does not (a shell-form ENTRYPOINT or CMD, a LABEL value with spaces).
func parseDockerfile(text string) ([]dockerStage, error) {
	var stages []dockerStage
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("the last instruction ends with a continuation: %q", cur.String())
	}
	jsonArray := func(instr, arg string) ([]string, error) {
		var v []string
		if err := json.Unmarshal([]byte(arg), &v); err != nil {
			return nil, fmt.Errorf("%s %s: only the JSON form is understood: %v", instr, arg, err)
		}
		return v, nil
	}
	for _, line := range lines {
		instr, arg, _ := strings.Cut(line, " ")
		instr, arg = strings.ToUpper(instr), strings.TrimSpace(arg)
		if instr == "FROM" {
			fields := strings.Fields(arg)
			for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
				fields = fields[1:]
			}
			if len(fields) == 0 {
				return nil, fmt.Errorf("FROM %s names no image", arg)
			}
			stages = append(stages, dockerStage{From: fields[0], Labels: map[string]string{}})
			continue
		}
		if len(stages) == 0 {
			if instr == "ARG" {
				continue
			}
			return nil, fmt.Errorf("%s before FROM", instr)
		}
		s := &stages[len(stages)-1]
		var err error
		switch instr {
		case "USER":
			s.User = arg
		case "ENTRYPOINT":
			s.Entrypoint, err = jsonArray(instr, arg)
		case "CMD":
			s.Cmd, err = jsonArray(instr, arg)
		case "EXPOSE":
			for _, p := range strings.Fields(arg) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				s.Ports = append(s.Ports, p)
			}
		case "LABEL":
			for _, kv := range strings.Fields(arg) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("LABEL %s: only key=value pairs without spaces are understood", arg)
				}
				s.Labels[k] = strings.Trim(v, `"`)
			}
		case "COPY", "ADD":
			var args []string
			for _, f := range strings.Fields(arg) {
				if !strings.HasPrefix(f, "--") {
					args = append(args, f)
				}
			}
			if len(args) < 2 {
				return nil, fmt.Errorf("%s %s: want sources and a destination", instr, arg)
			}
			s.Files = append(s.Files, strings.TrimPrefix(args[len(args)-1], "/"))
		case "RUN":
			s.Runs = append(s.Runs, arg)
		}
		if err != nil {
			return nil, err
		}
	}
	return stages, sc.Err()
}

func readDockerfile(t *testing.T) []dockerStage {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages, err := parseDockerfile(string(b))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages; want a build stage and the image's", len(stages))
	}
	return stages
}

func TestParseDockerfile(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    dockerStage
		wantErr string
	}{
		{"every instruction", `# comment
ARG GLOBAL
FROM --platform=$BUILDPLATFORM golang AS build
RUN go build \
      -o /out/x .
FROM scratch
LABEL a=1 \
      b="two"
COPY --from=build /out/x /x
USER 1:2
EXPOSE 80 53/udp
ENTRYPOINT ["/x"]
CMD ["--flag"]
`, dockerStage{From: "scratch", User: "1:2", Entrypoint: []string{"/x"}, Cmd: []string{"--flag"},
			Ports: []string{"80/tcp", "53/udp"}, Labels: map[string]string{"a": "1", "b": "two"}, Files: []string{"x"}}, ""},
		{"shell-form entrypoint", "FROM scratch\nENTRYPOINT /x\n", dockerStage{}, "only the JSON form"},
		{"label with spaces", "FROM scratch\nLABEL a=\"b c\"\n", dockerStage{}, "only key=value pairs"},
		{"copy without a destination", "FROM scratch\nCOPY a\n", dockerStage{}, "want sources and a destination"},
		{"instruction before FROM", "USER 1\nFROM scratch\n", dockerStage{}, "USER before FROM"},
		{"dangling continuation", "FROM scratch\nUSER 1 \\\n", dockerStage{}, "ends with a continuation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stages, err := parseDockerfile(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v; want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := stages[len(stages)-1]
			got.Runs = nil
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("final stage = %+v\nwant          %+v", got, tt.want)
			}
			if len(stages) != 2 || len(stages[0].Runs) != 1 || stages[0].Runs[0] != "go build  -o /out/x ." {
				t.Errorf("build stage = %+v; want one RUN with its continuation joined", stages[0])
			}
		})
	}
}

// TestDockerfileCopiesEveryPackage checks that the build stage copies every directory of this
// module that the hook's binary imports: a package added to its imports, and not to the
// Dockerfile, fails the build of those with a Docker engine (make image reads the whole tree).
func TestDockerfileCopiesEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "-C", "../..", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./cmd/webapp-hook").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/webapp-hook: %v", err)
	}
	const module = "github.com/example/webapp-operator/"
	want := map[string]bool{}
	for _, pkg := range strings.Fields(string(out)) {
		if rest, ok := strings.CutPrefix(pkg, module); ok {
			dir, _, _ := strings.Cut(rest, "/")
			want[dir+"/"] = true
		}
	}
	copied := readDockerfile(t)[0].Files
	for _, dir := range slices.Sorted(maps.Keys(want)) {
		if !slices.Contains(copied, dir) {
			t.Errorf("the hook imports packages under %s, which the Dockerfile's build stage does not copy (it copies %v)", dir, copied)
		}
	}
}

// TestDockerfileAsWritten checks that the Dockerfile, as written, makes the image Build makes:
// from no base image, the same user, entrypoint, command, ports, label names and files, and its
// binary built with the same settings and stamped in the same variables. TestDockerfileConfig
// (build tag image) compares it with the built image as skopeo inspects it.
func TestDockerfileAsWritten(t *testing.T) {
	stages := readDockerfile(t)
	final := stages[len(stages)-1]
	labels := slices.Sorted(maps.Keys(Labels(Hook.Name, "", Stamp{})))
	tests := []struct {
		what      string
		got, want any
	}{
		{"FROM", final.From, "scratch"},
		{"USER", final.User, User},
		{"ENTRYPOINT", final.Entrypoint, []string{Hook.Entrypoint()}},
		{"CMD", final.Cmd, []string(nil)},
		{"EXPOSE", final.Ports, Hook.Ports},
		{"LABEL names", slices.Sorted(maps.Keys(final.Labels)), labels},
		{"files", final.Files, []string{Hook.Name}},
	}
	for _, tt := range tests {
		if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
			t.Errorf("Dockerfile's final stage %s = %v; the built image has %v", tt.what, tt.got, tt.want)
		}
	}

	// The build stage compiles as goBuild does: the same environment and the same -X variables.
	build := strings.Join(stages[0].Runs, "\n")
	b, _ := os.ReadFile("../../Dockerfile")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-buildvcs=false", "GOAMD64=v1", "GOARM64=v8.0", "GOTOOLCHAIN=go1.27.3", "-s -w"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the Dockerfile does not build with %s, as hack/image does", want)
		}
	}
	want := regexp.MustCompile(`-X (main\.\w+)=`).FindAllStringSubmatch(LDFlags(Stamp{}), -1)
	got := regexp.MustCompile(`-X (main\.\w+)=`).FindAllStringSubmatch(build, -1)
	names := func(m [][]string) []string {
		var out []string
		for _, s := range m {
			out = append(out, s[1])
		}
		sort.Strings(out)
		return out
	}
	if !slices.Equal(names(got), names(want)) {
		t.Errorf("the Dockerfile stamps %v; hack/image stamps %v", names(got), names(want))
	}
	// Each build argument DockerBuildArgs passes is declared.
	for _, arg := range regexp.MustCompile(`--build-arg (\w+)=`).FindAllStringSubmatch(DockerBuildArgs("s", Stamp{}), -1) {
		if !regexp.MustCompile(`(?m)^ARG .*\b` + arg[1] + `\b`).MatchString(string(b)) {
			t.Errorf("DockerBuildArgs passes %s, which the Dockerfile does not declare", arg[1])
		}
	}
}
