// Precompiled once for every test suite (stepscope_test_support), reused by each.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <QtTest/QtTest>
