// Package hooktest holds what the project's tests share: the hook contract every answer must
// keep (CheckResponse), observed children made from typed objects (Observe), a JSON path walker
// (Field), golden files (Golden, rewritten with -update) and fixtures (ReadFile), with a TestMain
// (GoldenMain) that fails a package's full run when a file of its golden folders was read by no
// test, requests with many pods (WithPods) and a certificate authority for TLS tests (CA).
//
// It is for tests only; no production package imports it. Its name follows net/http/httptest,
// and it is not the standard library's testing/synctest.
package hooktest
