package storage_test

const kubeconfigNS = "vc-syncer-system"
