package revision

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// Applied returns the pod template Metacontroller last applied to d, the apply form of the hook's
// answer (its metacontroller.k8s.io/last-applied-configuration annotation): the template the
// hook named by its revision. ok is false when d carries none, or it does not decode.
func Applied(d *appsv1.Deployment) (t corev1.PodTemplateSpec, ok bool) {
	p, ok := sync.AppliedTemplate(d.Annotations[sync.AnnotationLastApplied])
	if !ok {
		return t, false
	}
	return *p, true
}

// Of is the revision of the template d runs: the canary Deployment's own record of it
// (canary.AnnotationRevision), or else the digest of the template Metacontroller last applied to
// it, as the hook reads the stable Deployment's; "" when neither tells.
func Of(d *appsv1.Deployment) string {
	if d == nil {
		return ""
	}
	if r := d.Annotations[canary.AnnotationRevision]; r != "" {
		return r
	}
	if t, ok := Applied(d); ok {
		return sync.TemplateHash(&t)
	}
	return ""
}

// Desired is the revision of the pod template the hook builds for wa's spec, with stable as the
// WebApp's observed stable Deployment (nil when there is none). It is the hook's own answer,
// from sync.PodTemplate, with stable read as sync/wire reads it. The template's ConfigMap and
// Secret digest is stable's, as the hook keeps it when Metacontroller sends it no ConfigMaps or
// Secrets: a change of their data since stable was made is not seen. Nor are the hook's install
// defaults (--default-security-profile), which this package cannot read.
func Desired(wa *webappv1.WebApp, stable *appsv1.Deployment) (string, error) {
	t, err := build(wa, &wa.Spec, stable)
	if err != nil {
		return "", err
	}
	return sync.TemplateHash(t), nil
}

// build is the pod template the hook builds for spec, as the spec of the WebApp wa, with stable
// observed (sync.PodTemplate), spec defaulted as the hook's request is (webappv1.Default), in a
// copy. The spec's rollout is left out: it does not reach the template, so neither does a
// problem of it.
func build(wa *webappv1.WebApp, spec *webappv1.WebAppSpec, stable *appsv1.Deployment) (*corev1.PodTemplateSpec, error) {
	s, err := roundTrip(spec)
	if err != nil {
		return nil, err
	}
	s.Rollout = nil
	webappv1.Default(s)
	var observed *sync.ObservedDeployment
	if stable != nil {
		b, err := json.Marshal(stable)
		if err != nil {
			return nil, err
		}
		if observed, err = wire.Deployment(b); err != nil {
			return nil, err
		}
	}
	return sync.PodTemplate(wa.Name, s, observed)
}

// roundTrip copies a spec through its JSON form.
func roundTrip(spec *webappv1.WebAppSpec) (*webappv1.WebAppSpec, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var out webappv1.WebAppSpec
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
