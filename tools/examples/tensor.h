// A 2x2 float "tensor" for the examples, printed the way the seed's torch output looks.
#pragma once

#include <cstdio>
#include <random>

struct Tensor2x2 {
  float v[2][2] = {};

  static Tensor2x2 Randn(unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> d;
    Tensor2x2 t;
    for (auto& row : t.v)
      for (float& x : row) x = d(gen);
    return t;
  }
  void Print(const char* label) const {
    printf("%s: tensor([[%.4f, %.4f],\n        [%.4f, %.4f]])\n", label, v[0][0], v[0][1], v[1][0], v[1][1]);
  }
};
