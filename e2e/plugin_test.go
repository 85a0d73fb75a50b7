//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/plugin"
	"github.com/example/webapp-operator/plugin/screen"
)

// The images of TestPlugin's releases, after canaryImage.
const (
	pluginImage3 = "nginx:1.29"
	pluginImage4 = "nginx:1.30"
)

// recordedStories is where E2E_RECORD_SCREENS=1 writes the stories the golden screens of
// plugin/screen are drawn from, and pluginReport the screens of TestPlugin, as kubectl webapp get
// showed them, for docs/kubectl-plugin.md.
const (
	recordedStories = "../plugin/testdata/recorded"
	pluginReport    = "../bin/e2e-plugin.md"
)

// TestPlugin proves kubectl webapp (issue 37) under the real Metacontroller with the
// gateway-api component and the real hook binary, with the admission policy and the roles of
// metacontroller/ installed, the plugin run as its users run it: the built binary, with a
// kubeconfig of their own.
//   - carol holds webapp-edit alone: she sets the image, follows the canary with get -w until its
//     first pause, promotes it step by step and sees it Ready on the new revision; aborts a
//     second canary and retries it; and is told plainly that undo needs to read the stable
//     Deployment, which webapp-edit does not grant;
//   - dave holds webapp-edit and view, and undoes;
//   - bob holds webapp-view alone: he may get and list, and his promote is refused by RBAC, the
//     plugin saying so;
//   - every refusal says why, and exits 3 (4 when forbidden).
//
// The test plays the Gateway controller, accepting every route (playGateway), so that the
// canary's steps go on; the pods are kwok's. E2E_RECORD_SCREENS=1 writes the WebApp, its
// Deployments and its pods at each canary phase to plugin/testdata/recorded, the golden
// screens' stories; bin/e2e-plugin.md gets the screens.
func TestPlugin(t *testing.T) {
	requireCluster(t)
	requireMetacontroller(t)
	bin := buildPlugin(t)
	in := renderInstall(t, "e2e/testdata/gateway-api")
	hook := startHook(t, in)
	cc := in.compositeController(t, hook.url())
	cc["spec"].(map[string]any)["resyncPeriodSeconds"] = 5
	mc := startMetacontroller(t, cc, canaryWorkers)
	installPolicy(t)

	ns := client.namespace(t, "plugin")
	if _, err := client.create(gatewayObject(ns, "public")); err != nil {
		t.Fatal(err)
	}
	playGateway(t, ns, "True/Accepted: Route is accepted")
	bind(t, ns, "carol", "ClusterRole", "webapp-edit")
	bind(t, ns, "bob", "ClusterRole", "webapp-view")
	bind(t, ns, "dave", "ClusterRole", "webapp-edit")
	bind(t, ns, "dave", "ClusterRole", "view")
	may(t, "carol", "patch", "example.com", "webapps", ns)
	may(t, "bob", "list", "example.com", "webapps", ns)
	may(t, "dave", "get", "apps", "deployments", ns)
	carol, bob, dave := pluginAs(t, bin, "carol", ns), pluginAs(t, bin, "bob", ns), pluginAs(t, bin, "dave", ns)
	report := &pluginScreens{}
	defer report.write(t)

	const name, replicas = "shop", 2
	steps := []any{obj{"weight": 25}, obj{"weight": 50, "pauseSeconds": 5}}
	if _, err := client.create(webApp(ns, name, canarySpec(replicas, obj{"steps": steps}))); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ns, name, "Ready, no canary yet", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Phase == webappv1.PhaseReady && st.AvailableReplicas == replicas
	})

	// who names the WebApp in every message of the plugin.
	who := "webapp/" + name + " in namespace " + ns
	var revision, firstRevision string
	t.Run("carol, with webapp-edit alone: set image, get -w to the first pause, promote to Ready", func(t *testing.T) {
		carol.want(t, plugin.ExitOK, who+": image nginx:1.27 -> nginx:1.28; a canary of the new template starts", "set", "image", name, canaryImage)
		carol.want(t, plugin.ExitRefused, "refused: "+who+": its spec asks for image nginx:1.28 already: nothing to set", "set", "image", name, canaryImage)

		screen := carol.watchUntil(t, "the canary paused at its first step", 90*time.Second, "Paused at step 1 of 2", "get", name, "-w")
		for _, want := range []string{"webapp/shop in namespace " + ns, ">  1     25%     until promoted  paused until promoted", "Weight    25% asked, 25% on the route",
			"Revisions: the Deployments cannot be read", "you may not get deployments in namespace"} {
			if !strings.Contains(screen, want) {
				t.Errorf("carol's get -w screen at the pause:\n%s\nwant it to hold %q", screen, want)
			}
		}
		st := webAppStatus(t, ns, name)
		revision, firstRevision = st.Canary.Revision, st.Canary.Revision
		report.add(t, dave, "Paused at its first step", "paused")
		report.addText("Paused at its first step, as carol (webapp-edit alone) sees it", screen)

		carol.want(t, plugin.ExitOK, fmt.Sprintf("%s: revision %s goes on to step 2 of 2 (50%%): step 1 skipped", who, revision), "promote", name)
		waitStatus(t, ns, name, "step 2's pause", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			c := st.Canary
			return c != nil && c.Revision == revision && c.Phase == webappv1.CanaryProgressing && c.Step == 1 && c.PauseStartTime != nil
		})
		report.add(t, dave, "Progressing: step 2's pause", "progressing")
		waitStatus(t, ns, name, "promoting", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryPromoting
		})
		report.add(t, dave, "Promoting", "promoting")
		waitStatus(t, ns, name, "Ready on the new revision", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Phase == webappv1.CanaryPromoted
		})
		report.add(t, dave, "Promoted", "promoted")

		// carol sees it Ready on the new revision.
		out := carol.want(t, plugin.ExitOK, `"kind": "WebApp"`, "get", name, "-o", "json")
		var wa webappv1.WebApp
		if err := json.Unmarshal([]byte(out), &wa); err != nil {
			t.Fatalf("get -o json: %v\n%s", err, out)
		}
		if st := wa.Status; st.Phase != webappv1.PhaseReady || st.Canary == nil || st.Canary.Revision != revision || st.Canary.Phase != webappv1.CanaryPromoted || wa.Spec.Image != canaryImage {
			t.Errorf("carol's get -o json: phase %s, image %s, status.canary %s; want Ready, %s, revision %s Promoted", st.Phase, wa.Spec.Image, jsonString(st.Canary), canaryImage, revision)
		}
		carol.want(t, plugin.ExitOK, "Canary "+revision+": Promoted", "get", name)
		if img := imageOf(mustGet(t, "apps/v1", "Deployment", ns, name)); img != canaryImage {
			t.Errorf("the stable Deployment runs %s; want %s", img, canaryImage)
		}

		// Nothing is left to act on.
		promoted := fmt.Sprintf("%s: revision %s is already promoted", who, revision)
		carol.want(t, plugin.ExitRefused, "refused: "+promoted+": nothing to promote", "promote", name)
		carol.want(t, plugin.ExitRefused, "refused: "+promoted+": nothing to promote", "promote", name, "--full")
		carol.want(t, plugin.ExitRefused, "refused: "+promoted+": nothing to abort", "abort", name)
		carol.want(t, plugin.ExitRefused, fmt.Sprintf("refused: %s: revision %s is Promoted, not Aborted: nothing to retry", who, revision), "retry", name)
		// undo would act here: it goes back to the revision before (TestRelease proves it).
	})

	t.Run("bob, with webapp-view alone: get and list, and promote refused by RBAC", func(t *testing.T) {
		carol.want(t, plugin.ExitOK, who+": image nginx:1.28 -> nginx:1.29", "set", "image", name, pluginImage3)
		st := waitStatus(t, ns, name, "the new canary paused", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Revision != revision && st.Canary.Phase == webappv1.CanaryPaused
		})
		revision = st.Canary.Revision
		bob.want(t, plugin.ExitOK, "Canary "+revision+": Paused at step 1 of 2", "get", name)
		bob.want(t, plugin.ExitOK, "shop  2/2    Progressing  Paused  1/2   25%", "list")
		bob.want(t, plugin.ExitForbidden, `error: you may not patch webapps in namespace `+ns+`: webapps.example.com "shop" is forbidden: User "bob" cannot patch resource "webapps"`, "promote", name)
		bob.want(t, plugin.ExitForbidden, "error: you may not patch webapps in namespace "+ns, "abort", name)
		if st := webAppStatus(t, ns, name); st.Canary.Phase != webappv1.CanaryPaused || st.Canary.Revision != revision {
			t.Errorf("status.canary %s after bob's refused promote; want %s Paused still", jsonString(st.Canary), revision)
		}
	})

	t.Run("carol aborts, then retries the same revision from its first step", func(t *testing.T) {
		carol.want(t, plugin.ExitOK, fmt.Sprintf("%s: aborting revision %s (at step 1 of 2)", who, revision), "abort", name)
		waitStatus(t, ns, name, "aborted", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryAborted && st.Canary.Weight == nil
		})
		report.add(t, dave, "Aborted", "aborted")
		carol.want(t, plugin.ExitRefused, fmt.Sprintf("refused: %s: revision %s is already aborted", who, revision), "abort", name)
		carol.want(t, plugin.ExitRefused, fmt.Sprintf("refused: %s: revision %s was aborted: nothing to promote (kubectl webapp retry shop starts it again)", who, revision), "promote", name)

		carol.want(t, plugin.ExitOK, fmt.Sprintf("%s: retrying revision %s from step 1 (retry 1); removed what the aborted attempt left: %s=%s", who, revision, webappv1.AnnotationAbort, revision), "retry", name)
		// The retry is attempt 1 of the revision: the abort of attempt 0 would not act on it.
		waitStatus(t, ns, name, "the same revision paused at step 1 again, as attempt 1", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			c := st.Canary
			return c != nil && c.Revision == revision && c.Attempt == 1 && c.Retries == 1 && c.Phase == webappv1.CanaryPaused && c.Step == 0 && c.FailedChecks == 0
		})
		annotations, _ := field(mustGet(t, "example.com/v1", "WebApp", ns, name), "metadata", "annotations").(map[string]any)
		if _, left := annotations[webappv1.AnnotationAbort]; left || annotations[webappv1.AnnotationRetry] != webappv1.RetryValue(revision, 0, 0) {
			t.Errorf("annotations %v after retry; want %s=%s and no %s", annotations, webappv1.AnnotationRetry, revision, webappv1.AnnotationAbort)
		}
		carol.want(t, plugin.ExitRefused, fmt.Sprintf("refused: %s: revision %s, attempt 1 is Paused, not Aborted: nothing to retry", who, revision), "retry", name)
	})

	t.Run("undo: refused to carol, who may not read the Deployment; done by dave", func(t *testing.T) {
		carol.want(t, plugin.ExitForbidden, "error: undo reads the template the stable Deployment runs: you may not get deployments in namespace "+ns, "undo", name)
		stable := takeStable(t, ns, name)
		dave.want(t, plugin.ExitOK, fmt.Sprintf("%s: rolling back from revision %s to ", who, revision), "undo", name)
		st := waitStatus(t, ns, name, "rolled back and Ready", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Revision == revision && st.Canary.Phase == webappv1.CanaryRolledBack
		})
		if img, _ := field(mustGet(t, "example.com/v1", "WebApp", ns, name), "spec", "image").(string); img != canaryImage {
			t.Errorf("spec.image %s after undo; want the stable Deployment's, %s", img, canaryImage)
		}
		report.add(t, dave, "Rolled back", "rolledback")
		stable.untouched(t, ns, name)
		carol.want(t, plugin.ExitRefused, fmt.Sprintf("refused: %s: revision %s, attempt 1 was rolled back: nothing to promote", who, st.Canary.Revision), "promote", name)
	})

	t.Run("a status older than the spec: refused until the hook has answered", func(t *testing.T) {
		mc.stop(syscall.SIGTERM) // no answer for the new spec meanwhile
		patchSpec(t, ns, name, obj{"image": pluginImage4})
		carol.want(t, plugin.ExitRefused, "the hook has not answered for the latest spec yet, and another revision may be on its way", "promote", name)
		carol.want(t, plugin.ExitRefused, "the hook has not answered for the latest spec yet", "abort", name)
		mc.restart(t, canaryWorkers)
		waitStatus(t, ns, name, "the canary of the latest spec", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryPaused
		})
		carol.want(t, plugin.ExitOK, who+": promoting revision", "promote", name, "--full")
	})

	// The first subtest's promote left webapp.example.com/promote-step=<first revision>/0 on the
	// WebApp, and nothing removed it: before attempts, it ended the first step of that template's
	// next canary at once.
	t.Run("the first template again: the promote-step its first canary left does not act on the new attempt", func(t *testing.T) {
		waitStatus(t, ns, name, "the latest canary promoted", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Phase == webappv1.CanaryPromoted
		})
		carol.want(t, plugin.ExitOK, who+": image "+pluginImage4+" -> "+canaryImage, "set", "image", name, canaryImage)
		st := waitStatus(t, ns, name, "the first template's new attempt paused at its first step", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			c := st.Canary
			return c != nil && c.Revision == firstRevision && c.Phase == webappv1.CanaryPaused
		})
		if c := st.Canary; c.Step != 0 || c.Attempt != 1 {
			t.Errorf("status.canary %s; want attempt 1 of %s paused at step 0", jsonString(c), firstRevision)
		}
		leftover := fmt.Sprintf("%s=%s: names attempt 0 of revision %s, which is over", webappv1.AnnotationPromoteStep, webappv1.PromoteStepValue(firstRevision, 0, 0), firstRevision)
		if got := strings.Join(st.Canary.IgnoredAnnotations, "\n"); !strings.Contains(got, leftover) {
			t.Errorf("status.canary.ignoredAnnotations %q; want it to name %q", st.Canary.IgnoredAnnotations, leftover)
		}
		carol.want(t, plugin.ExitOK, fmt.Sprintf("%s: revision %s, attempt 1 goes on to step 2 of 2 (50%%): step 1 skipped", who, firstRevision), "promote", name)
	})

	t.Run("usage", func(t *testing.T) {
		carol.want(t, plugin.ExitUsage, "error: accepts 1 arg(s), received 0", "promote")
		carol.want(t, plugin.ExitError, "error: webapp cart not found in namespace "+ns, "promote", "cart")
		carol.want(t, plugin.ExitOK, "kubectl-webapp ", "version")
	})
}

// buildPlugin builds cmd/kubectl-webapp into a folder of t's, as make plugin builds it for a
// user's machine.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-webapp")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/kubectl-webapp").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/kubectl-webapp: %v\n%s", err, out)
	}
	return bin
}

// pluginUser runs kubectl webapp as one of testUsers, with a kubeconfig holding that user's
// token alone, in a namespace.
type pluginUser struct {
	user, bin, kubeconfig, ns string
}

// pluginAs is kubectl webapp as user, in ns.
func pluginAs(t *testing.T, bin, user, ns string) *pluginUser {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig-"+user)
	if err := os.WriteFile(kubeconfig, []byte(strings.Replace(cluster.kubeconfig(), cluster.token, cluster.users[user], 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return &pluginUser{user: user, bin: bin, kubeconfig: kubeconfig, ns: ns}
}

// command is kubectl webapp args, as the user, in the user's namespace, without a terminal.
func (u *pluginUser) command(args ...string) *exec.Cmd {
	cmd := exec.Command(u.bin, append([]string{"--kubeconfig", u.kubeconfig, "-n", u.ns}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	return cmd
}

// run runs kubectl webapp args to the end.
func (u *pluginUser) run(args ...string) (stdout, stderr string, code int) {
	cmd := u.command(args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		code = -1
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}

// want runs kubectl webapp args and fails t unless it exits with code, and what it prints
// (stdout when it exits 0, stderr otherwise) holds want. It returns stdout.
func (u *pluginUser) want(t *testing.T, code int, want string, args ...string) string {
	t.Helper()
	stdout, stderr, got := u.run(args...)
	printed := stdout
	if code != plugin.ExitOK {
		printed = stderr
	}
	if got != code || !strings.Contains(printed, want) {
		t.Errorf("kubectl webapp %s, as %s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d and %q", strings.Join(args, " "), u.user, got, stdout, stderr, code, want)
	}
	return stdout
}

// watchUntil runs kubectl webapp args (get -w) until a screen holds until, then interrupts it,
// as a person does with ^C, checks that it exits 0, and returns that screen.
func (u *pluginUser) watchUntil(t *testing.T, what string, timeout time.Duration, until string, args ...string) string {
	t.Helper()
	cmd := u.command(args...)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	var screens int
	go func() {
		var cur strings.Builder
		s := bufio.NewScanner(pipe)
		for s.Scan() {
			if s.Text() == plugin.Separator {
				cur.Reset()
				screens++
				continue
			}
			cur.WriteString(s.Text() + "\n")
			if strings.Contains(cur.String(), until) && strings.Contains(s.Text(), "Pods") {
				select {
				case found <- cur.String():
				default:
				}
			}
		}
		close(found)
	}()
	var screen string
	select {
	case screen = <-found:
	case <-time.After(timeout):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("kubectl webapp %s, as %s: no screen with %q (%s) in %s; stderr:\n%s", strings.Join(args, " "), u.user, until, what, timeout, stderr.String())
	}
	if screen == "" {
		cmd.Wait()
		t.Fatalf("kubectl webapp %s, as %s, ended before %s; stderr:\n%s", strings.Join(args, " "), u.user, what, stderr.String())
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("kubectl webapp %s, interrupted: %v; want exit 0\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Errorf("kubectl webapp %s did not end 10 s after an interrupt", strings.Join(args, " "))
	}
	t.Logf("kubectl webapp %s showed %d screens before %s", strings.Join(args, " "), screens+1, what)
	return screen
}

// pluginScreens are TestPlugin's screens, as Markdown for bin/e2e-plugin.md.
type pluginScreens struct {
	b strings.Builder
}

// add shows the WebApp's screen, as u's kubectl webapp get prints it, under title, and records
// the story of the canary phase story (recordStory).
func (p *pluginScreens) add(t *testing.T, u *pluginUser, title, story string) {
	t.Helper()
	recordStory(t, u.ns, "shop", story, "TestPlugin")
	stdout, stderr, code := u.run("get", "shop")
	if code != plugin.ExitOK {
		t.Errorf("kubectl webapp get shop, as %s: exit %d: %s", u.user, code, stderr)
	}
	p.addText(title+", as "+u.user+" sees it", stdout)
}

func (p *pluginScreens) addText(title, screen string) {
	fmt.Fprintf(&p.b, "### %s\n\n```\n$ kubectl webapp get shop\n%s```\n\n", title, screen)
}

// write writes the screens to pluginReport.
func (p *pluginScreens) write(t *testing.T) {
	head := fmt.Sprintf("## kubectl webapp get, from TestPlugin (%s)\n\n", time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(pluginReport, []byte(head+p.b.String()), 0o644); err == nil {
		t.Logf("the screens as Markdown: %s", pluginReport)
	}
}

// recordStory writes, when E2E_RECORD_SCREENS is set, the story of the WebApp ns/name as the
// admin reads it now (the WebApp, its stable and canary Deployments and its pods) to
// plugin/testdata/recorded/<story>.json, a story of the golden screens of plugin/screen, saying
// which test recorded it. Regenerate the screens after: go test ./plugin/screen -update.
func recordStory(t *testing.T, ns, name, story, test string) {
	t.Helper()
	if os.Getenv("E2E_RECORD_SCREENS") == "" {
		return
	}
	path, err := writeStory(ns, name, story, fmt.Sprintf("%s (%s)", test, t.Name()))
	if err != nil {
		t.Errorf("record the story %s: %v", story, err)
		return
	}
	t.Logf("recorded the story %s: %s", story, path)
}

// writeStory reads the story of the WebApp ns/name and writes it as story, recorded by test.
func writeStory(ns, name, story, test string) (string, error) {
	rec := screen.Recording{Story: screen.Story{Now: time.Now().UTC().Truncate(time.Second)}}
	wa, err := client.get("example.com/v1", "WebApp", ns, name)
	if err == nil && wa == nil {
		err = fmt.Errorf("no WebApp %s/%s", ns, name)
	}
	if err != nil {
		return "", err
	}
	if err := roundTrip(wa, &rec.WebApp); err != nil {
		return "", err
	}
	for _, n := range []string{name, name + webappv1.CanarySuffix} {
		d, err := client.get("apps/v1", "Deployment", ns, n)
		if err != nil {
			return "", err
		}
		if d == nil {
			continue
		}
		var dep appsv1.Deployment
		if err := roundTrip(d, &dep); err != nil {
			return "", err
		}
		rec.Deployments = append(rec.Deployments, dep)
	}
	for _, p := range podsNow(ns, name) {
		var pod corev1.Pod
		if err := roundTrip(p, &pod); err != nil {
			return "", err
		}
		rec.Pods = append(rec.Pods, pod)
	}
	rec.Source = fmt.Sprintf("recorded by the e2e suite's %s at %s", test, rec.Now.Format(time.RFC3339))
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(recordedStories, story+".json")
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

// recordStoryWhen records the story story (recordStory) of the WebApp ns/name the first time its
// status satisfies ok, watching from a goroutine of its own until t ends, so that the test it
// records goes on at its own pace. It does nothing unless E2E_RECORD_SCREENS is set.
func recordStoryWhen(t *testing.T, ns, name, story, test string, ok func(webappv1.WebAppStatus) bool) {
	t.Helper()
	if os.Getenv("E2E_RECORD_SCREENS") == "" {
		return
	}
	who := fmt.Sprintf("%s (%s)", test, t.Name())
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				t.Logf("the story %s was never seen", story)
				return
			case <-time.After(200 * time.Millisecond):
			}
			wa, err := client.get("example.com/v1", "WebApp", ns, name)
			var st webappv1.WebAppStatus
			if err != nil || wa == nil || roundTrip(wa["status"], &st) != nil || !ok(st) {
				continue
			}
			if path, err := writeStory(ns, name, story, who); err != nil {
				t.Errorf("record the story %s: %v", story, err)
			} else {
				t.Logf("recorded the story %s: %s", story, path)
			}
			return
		}
	}()
	t.Cleanup(func() {
		close(done)
		<-stopped
	})
}
