package analysis

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/example/webapp-operator/canary"
)

// The outcomes of a query, as webapp_hook_analysis_queries_total counts them.
const (
	outcomeOK          = "ok"
	outcomeTimeout     = "timeout"
	outcomeBusy        = "busy"
	outcomeHTTPError   = "http_error"
	outcomeRefused     = "refused"
	outcomeUnreachable = "unreachable"
	outcomeBadResult   = "bad_result"
	outcomeTooLarge    = "too_large"
)

// outcomes are every outcome, so that each has a series from the start.
var outcomes = []string{outcomeOK, outcomeTimeout, outcomeBusy, outcomeHTTPError, outcomeRefused, outcomeUnreachable, outcomeBadResult, outcomeTooLarge}

// describe is the sentence the status shows for a query's error, and its outcome. The sentence
// names no URL, token or query: it says what went wrong in Prometheus's words at most (its error
// type), or the network's. ctx is the query's, code the HTTP status code Prometheus answered
// with, 0 for none.
func describe(err error, ctx context.Context, code int, timeout time.Duration) (sentence, outcome string) {
	var perr *promv1.Error
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("Prometheus did not answer within %s", timeout), outcomeTimeout
	case errors.Is(err, errRedirect):
		return fmt.Sprintf("Prometheus answered HTTP %d (the hook follows no redirect)", code), outcomeHTTPError
	case errors.Is(err, errTooLarge):
		return fmt.Sprintf("Prometheus's answer was over %d MiB", MaxAnswerBytes>>20), outcomeTooLarge
	case errors.As(err, &perr):
		switch perr.Type {
		case promv1.ErrServer, promv1.ErrClient:
			if code == 0 {
				code = statusIn(perr.Msg)
			}
			return fmt.Sprintf("Prometheus answered HTTP %d", code), outcomeHTTPError
		case promv1.ErrBadResponse:
			return "Prometheus answered something other than a query result", outcomeBadResult
		}
		return fmt.Sprintf("Prometheus refused the query (%s)", word(string(perr.Type))), outcomeRefused
	case errors.Is(err, syscall.ECONNREFUSED):
		return "cannot reach Prometheus (connection refused)", outcomeUnreachable
	case errors.Is(err, syscall.ECONNRESET):
		return "cannot reach Prometheus (connection reset)", outcomeUnreachable
	case errors.As(err, &dns):
		return "cannot reach Prometheus (its host name does not resolve)", outcomeUnreachable
	case errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &host), errors.As(err, &verify):
		return "cannot reach Prometheus (its TLS certificate is not trusted)", outcomeUnreachable
	}
	return "cannot reach Prometheus", outcomeUnreachable
}

// statusIn is the status code at the end of client_golang's "server error: 503", or 0.
func statusIn(msg string) int {
	i := strings.LastIndexByte(msg, ' ')
	n, _ := strconv.Atoi(msg[i+1:])
	return n
}

// word is s if it is a short word of letters and underscores (Prometheus's error types are), or
// "error": the status repeats nothing else of an answer.
func word(s string) string {
	if s == "" || len(s) > 32 || strings.ContainsFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && r != '_' }) {
		return "error"
	}
	return s
}

// read reads the series of a check's query (Query) into the canary's and the stable version's
// values; scale turns the Gateway's histogram bounds into milliseconds. A value that is not a
// finite number (NaN, ±Inf) is absent, as a series that is not there; a metric with more than
// one series (a template that does not aggregate) is an error of that metric. A result that is
// not a vector, or a series without the labels Query adds, is an error of the whole result.
func read(v model.Value, scale float64) (canaryValues, stableValues canary.Values, err error) {
	vec, ok := v.(model.Vector)
	if !ok {
		return canaryValues, stableValues, fmt.Errorf("result of type %s, want a vector", v.Type())
	}
	seen := map[string]bool{}
	for _, s := range vec {
		value, metric, track := string(s.Metric[labelValue]), string(s.Metric[labelMetric]), string(s.Metric[labelTrack])
		var vals *canary.Values
		switch track {
		case trackCanary:
			vals = &canaryValues
		case trackStable:
			vals = &stableValues
		default:
			return canaryValues, stableValues, fmt.Errorf("series %s: track %q", s.Metric, track)
		}
		f := float64(s.Value)
		finite := !math.IsNaN(f) && !math.IsInf(f, 0)
		id := value + "/" + metric + "/" + track
		if value == valueBuckets {
			id += "/" + string(s.Metric[model.BucketLabel])
		}
		if seen[id] {
			if value != valueMetric {
				return canaryValues, stableValues, fmt.Errorf("series %s twice", s.Metric)
			}
			delete(vals.Metrics, metric)
			vals.Errors = set(vals.Errors, metric, "its template's query gives more than one series: it must aggregate them into one")
			continue
		}
		seen[id] = true
		switch value {
		case valueRequests:
			if finite {
				vals.Requests = &f
			}
		case valueFailed:
			if finite {
				vals.Failed = &f
			}
		case valueBuckets:
			le, err := strconv.ParseFloat(string(s.Metric[model.BucketLabel]), 64)
			if err != nil || math.IsNaN(le) {
				return canaryValues, stableValues, fmt.Errorf("series %s: le %q", s.Metric, s.Metric[model.BucketLabel])
			}
			if finite {
				if !math.IsInf(le, 1) {
					le *= scale
				}
				vals.Buckets = append(vals.Buckets, canary.Bucket{UpperBound: le, Count: f})
			}
		case valueMetric:
			if metric == "" {
				return canaryValues, stableValues, fmt.Errorf("series %s: no metric", s.Metric)
			}
			if finite && vals.Errors[metric] == "" {
				if vals.Metrics == nil {
					vals.Metrics = map[string]float64{}
				}
				vals.Metrics[metric] = f
			}
		default:
			return canaryValues, stableValues, fmt.Errorf("series %s: value %q", s.Metric, value)
		}
	}
	canaryValues.Buckets, stableValues.Buckets = histogram(canaryValues.Buckets), histogram(stableValues.Buckets)
	return canaryValues, stableValues, nil
}

// histogram sorts b by upper bound and makes its counts cumulative and monotonic, as
// histogram_quantile does (increase() of each bucket is extrapolated apart, so a higher bucket can
// read a little less than a lower); nil unless it ends with the +Inf bucket.
func histogram(b []canary.Bucket) []canary.Bucket {
	if len(b) == 0 {
		return nil
	}
	slices.SortFunc(b, func(x, y canary.Bucket) int { return cmp.Compare(x.UpperBound, y.UpperBound) })
	if !math.IsInf(b[len(b)-1].UpperBound, 1) {
		return nil
	}
	for i := 1; i < len(b); i++ {
		b[i].Count = max(b[i].Count, b[i-1].Count)
	}
	return b
}
