// Package config embeds the manifests under config/ that the syncer binary applies itself,
// such as the Tenant CustomResourceDefinition. config/ (kustomize) is the source of truth.
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package config
