// refuse.h: the CPU kernel every hgemm torch op registers (ops.cpp): host
// tensors raise a TypeError that names the first of them.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

void hgemm_refuse_cpu(const c10::OperatorHandle &op, torch::jit::Stack *stack);
