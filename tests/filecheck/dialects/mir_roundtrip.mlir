// RUN: %roundtrip
// RUN: %generic_roundtrip

func.func @elementwise() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[2, 4], bool> {rlx.name = "mask"}) {
  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[4], f32>
  %c = mir.constant dense<[1.5, -2.0, 0.25, 3.0]> : !rlx.tensor<[4], f32>
  %z = mir.constant dense<0.0> : !rlx.tensor<[], f32>
  %i = mir.constant dense<[1, 2, 3]> : !rlx.tensor<[3], i64>
  %t = mir.constant dense<[true, false]> : !rlx.tensor<[2], bool>
  %h = mir.constant dense<"0x0000C07F0000807F"> : !rlx.tensor<[2], f32>
  %add = mir.add %a, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %sub = mir.sub %add, %c : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %mul = mir.mul %sub, %z : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %div = mir.div %mul, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %pow = mir.pow %div, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %max = mir.max %pow, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %min = mir.min %max, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %neg = mir.neg %min : !rlx.tensor<[2, 4], f32>
  %abs = mir.abs %neg : !rlx.tensor<[2, 4], f32>
  %exp = mir.exp %abs : !rlx.tensor<[2, 4], f32>
  %log = mir.log %exp : !rlx.tensor<[2, 4], f32>
  %sqrt = mir.sqrt %log : !rlx.tensor<[2, 4], f32>
  %rsqrt = mir.rsqrt %sqrt : !rlx.tensor<[2, 4], f32>
  %tanh = mir.tanh %rsqrt : !rlx.tensor<[2, 4], f32>
  %sig = mir.sigmoid %tanh : !rlx.tensor<[2, 4], f32>
  %relu = mir.relu %sig : !rlx.tensor<[2, 4], f32>
  %gelu = mir.gelu %relu : !rlx.tensor<[2, 4], f32>
  %gelut = mir.gelu %gelu approximate tanh : !rlx.tensor<[2, 4], f32>
  %silu = mir.silu %gelut : !rlx.tensor<[2, 4], f32>
  %erf = mir.erf %silu : !rlx.tensor<[2, 4], f32>
  %cmp = mir.compare lt, %erf, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], bool>
  %sel = mir.where %cmp, %erf, %z : (!rlx.tensor<[2, 4], bool>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %half = mir.cast %sel : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[2, 4], f16>
  %back = mir.cast %half : !rlx.tensor<[2, 4], f16> -> !rlx.tensor<[2, 4], f32>
  func.return %back, %cmp : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], bool>
}

func.func @shapes() -> !rlx.tensor<[6, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %idx = mir.input "idx" : !rlx.tensor<[5], i32>
  %x2 = mir.param "w" : !rlx.tensor<[4, 2], f32>
  %mm = mir.matmul %x, %x2 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[4, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %sum = mir.reduce_sum %x axes [0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3], f32>
  %mean = mir.reduce_mean %x axes [2] keepdims : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 1], f32>
  %rmax = mir.reduce_max %x axes [1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4], f32>
  %rmin = mir.reduce_min %x axes [1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4], f32>
  %lse = mir.reduce_log_sum_exp %x axes [0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3], f32>
  %lsek = mir.reduce_log_sum_exp %x axes [2] keepdims : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 1], f32>
  %ssq = mir.reduce_sum_square %x axes [0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3], f32>
  %l2 = mir.reduce_l2 %x axes [2] keepdims : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 1], f32>
  %l1 = mir.reduce_l1 %x axes [1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4], f32>
  %lsum = mir.reduce_log_sum %x axes [0, 1, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[], f32>
  %am = mir.argmax %x axis 2 : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3], i64>
  %sm = mir.softmax %x axis 2 : !rlx.tensor<[2, 3, 4], f32>
  %r = mir.reshape %mm : !rlx.tensor<[2, 3, 2], f32> -> !rlx.tensor<[6, 2], f32>
  %tr = mir.transpose %x perm [2, 0, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[4, 2, 3], f32>
  %nar = mir.narrow %x axis 2 start 1 : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 2], f32>
  %sl = mir.slice %x starts [1, 0, 3] steps [1, 2, -2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[1, 2, 2], f32>
  %cat = mir.concat %x, %nar axis 2 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 2], f32>) -> !rlx.tensor<[2, 3, 6], f32>
  %exp = mir.expand %mean : !rlx.tensor<[2, 3, 1], f32> -> !rlx.tensor<[5, 2, 3, 4], f32>
  %g = mir.gather %x, %idx axis 2 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[2, 3, 5], f32>
  %gi = mir.constant dense<[0, 0, 2, -1]> : !rlx.tensor<[4], i64>
  %gei = mir.constant dense<[0, -1, 2, 1, -3, 2, 2, 0, -2, 1]> : !rlx.tensor<[2, 5, 1], i64>
  %ga = mir.gather_axes %x, %gi, %gi axes [1, 2] : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[4], i64>, !rlx.tensor<[4], i64>) -> !rlx.tensor<[2, 4, 4], f32>
  %ge = mir.gather_elements %x, %gei axis 1 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 5, 1], i64>) -> !rlx.tensor<[2, 5, 1], f32>
  %pad = mir.pad %x pads [0, 1, 2, 0, 0, 1] mode reflect : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4, 7], f32>
  %padc = mir.pad %x pads [0, 0, 1, 0, 0, 1] value -1.000000e+00 : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 6], f32>
  func.return %r : !rlx.tensor<[6, 2], f32>
}

func.func @symbolic() -> !rlx.tensor<[batch, seq, 8], f32> {
  %x = mir.input "x" : !rlx.tensor<[batch, seq, 16], f32>
  %w = mir.param "w" : !rlx.tensor<[16, 8], f32>
  %y = mir.matmul %x, %w : (!rlx.tensor<[batch, seq, 16], f32>, !rlx.tensor<[16, 8], f32>) -> !rlx.tensor<[batch, seq, 8], f32>
  %f = mir.reshape %y : !rlx.tensor<[batch, seq, 8], f32> -> !rlx.tensor<[batch, seq, 2, 4], f32>
  %u = mir.reshape %f : !rlx.tensor<[batch, seq, 2, 4], f32> -> !rlx.tensor<[batch, seq, 8], f32>
  func.return %u : !rlx.tensor<[batch, seq, 8], f32>
}

// Dims equal only at some sizes (checked when it runs): a concat of a map upsampled
// from stride 2 with the stride-1 one, a [1, min(seq, 64)] buffer slice expanded to seq.
func.func @may_agree() -> (!rlx.tensor<[n, 4, h], f32>, !rlx.tensor<[b, seq], f32>) {
  %x = mir.input "x" : !rlx.tensor<[n, 2, h], f32>
  %u = mir.input "u" : !rlx.tensor<[n, 2, ((h + 1) floordiv 2) * 2], f32>
  %c = mir.concat %x, %u axis 1 : (!rlx.tensor<[n, 2, h], f32>, !rlx.tensor<[n, 2, ((h + 1) floordiv 2) * 2], f32>) -> !rlx.tensor<[n, 4, h], f32>
  %t = mir.input "t" : !rlx.tensor<[1, min(seq, 64)], f32>
  %e = mir.expand %t : !rlx.tensor<[1, min(seq, 64)], f32> -> !rlx.tensor<[b, seq], f32>
  func.return %c, %e : !rlx.tensor<[n, 4, h], f32>, !rlx.tensor<[b, seq], f32>
}

func.func @nn() -> !rlx.tensor<[1, 4, 3, 3], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 4, 8, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 2, 3, 3], f32>
  %g = mir.param "g" : !rlx.tensor<[8], f32>
  %b = mir.param "b" : !rlx.tensor<[8], f32>
  %conv = mir.conv %x, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 2 : (!rlx.tensor<[1, 4, 8, 8], f32>, !rlx.tensor<[8, 2, 3, 3], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
  %bn = mir.batch_norm %conv, %g, %b, %g, %b eps 1.000000e-05 : (!rlx.tensor<[1, 8, 4, 4], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
  %gn = mir.group_norm %bn, %g, %b groups 4 eps 1.000000e-05 : (!rlx.tensor<[1, 8, 4, 4], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
  %mp = mir.max_pool %x kernel [3, 3] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 4, 8, 8], f32> -> !rlx.tensor<[1, 4, 3, 3], f32>
  %ap = mir.avg_pool %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode count_include_pad : !rlx.tensor<[1, 4, 8, 8], f32> -> !rlx.tensor<[1, 4, 5, 5], f32>
  %fcba = mir.fused_conv_bias_act %x, %w, %b residual %conv strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 2 act relu : (!rlx.tensor<[1, 4, 8, 8], f32>, !rlx.tensor<[8, 2, 3, 3], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[1, 8, 4, 4], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
  %fssa = mir.fused_scale_shift_act %conv, %g, %b act clip act_params [0.000000e+00, 6.000000e+00] : (!rlx.tensor<[1, 8, 4, 4], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
  func.return %mp : !rlx.tensor<[1, 4, 3, 3], f32>
}

func.func @transformer() -> !rlx.tensor<[1, 6, 32], f32> {
  %h = mir.input "h" : !rlx.tensor<[1, 6, 32], f32>
  %q = mir.input "q" : !rlx.tensor<[1, 4, 6, 8], f32>
  %k = mir.input "k" : !rlx.tensor<[1, 2, 6, 8], f32>
  %m = mir.input "m" : !rlx.tensor<[1, 1, 6, 6], bool>
  %cos = mir.param "cos" : !rlx.tensor<[6, 4], f32>
  %sin = mir.param "sin" : !rlx.tensor<[6, 4], f32>
  %s = mir.param "s" : !rlx.tensor<[32], f32>
  %wqkv = mir.param "wqkv" : !rlx.tensor<[32, 64], f32>
  %bqkv = mir.param "bqkv" : !rlx.tensor<[64], f32>
  %wo = mir.param "wo" : !rlx.tensor<[32, 32], f32>
  %ln = mir.layer_norm %h, %s, %s axis 2 eps 1.000000e-05 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %rms = mir.rms_norm %ln, %s axis 2 eps 1.000000e-06 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %rq = mir.rope %q, %cos, %sin : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 4, 6, 8], f32>
  %rk = mir.rope %k, %cos, %sin rotary_dim 8 interleaved : (!rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  %att = mir.attention %rq, %rk, %rk kind causal : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>) -> !rlx.tensor<[1, 4, 6, 8], f32>
  %attm = mir.attention %rq, %rk, %rk mask %m kind explicit scale 2.500000e-01 softcap 5.000000e+01 : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 1, 6, 6], bool>) -> !rlx.tensor<[1, 4, 6, 8], f32>
  %attz = mir.attention %rq, %rk, %rk mask %m kind explicit zero_nan : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 1, 6, 6], bool>) -> !rlx.tensor<[1, 4, 6, 8], f32>
  %fmba = mir.fused_matmul_bias_act %rms, %wqkv, %bqkv act silu : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 6, 64], f32>
  %sw = mir.fused_swiglu %fmba gate_first : !rlx.tensor<[1, 6, 64], f32> -> !rlx.tensor<[1, 6, 32], f32>
  %n, %sum = mir.fused_residual_layer_norm %sw, %h, %s, %s axis 2 eps 1.000000e-05 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>)
  %n2, %sum2 = mir.fused_residual_rms_norm %n, %sum, %s axis 2 eps 1.000000e-06 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>)
  %fab = mir.fused_attention_block %n2, %wqkv, %wo qkv_bias(%bqkv : !rlx.tensor<[64], f32>) rope(%cos, %sin : !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) heads 4 kv_heads 2 head_dim 8 kind causal : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %fabz = mir.fused_attention_block %n2, %wqkv, %wo qkv_bias(%bqkv : !rlx.tensor<[64], f32>) rope(%cos, %sin : !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) heads 4 kv_heads 2 head_dim 8 kind causal zero_nan : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  func.return %fab : !rlx.tensor<[1, 6, 32], f32>
}

func.func @quant() -> !rlx.tensor<[4, 8], f32> {
  %x = mir.input "x" : !rlx.tensor<[4, 8], f32>
  %s = mir.constant dense<0.05> : !rlx.tensor<[], f32>
  %zp = mir.constant dense<0> : !rlx.tensor<[], i8>
  %sc = mir.param "sc" : !rlx.tensor<[8], f32>
  %zc = mir.param "zc" : !rlx.tensor<[8], i8>
  %q = mir.quantize %x, %s, %zp : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4, 8], i8>
  %dq = mir.dequantize %q, %s, %zp : (!rlx.tensor<[4, 8], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4, 8], f32>
  %qc = mir.quantize %x, %sc, %zc axis 1 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], i8>) -> !rlx.tensor<[4, 8], i8>
  %q8 = mir.quantize %x, %s : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4, 8], f8e4m3>
  %fq = mir.fake_quantize %dq, %s, %zp range -128 to 127 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4, 8], f32>
  func.return %fq : !rlx.tensor<[4, 8], f32>
}

// CHECK-LABEL: func.func @elementwise() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[2, 4], bool> {rlx.name = "mask"}) {
// CHECK-NEXT: %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %b = mir.input "b" : !rlx.tensor<[4], f32>
// CHECK-NEXT: %c = mir.constant dense<[1.5, -2.0, 0.25, 3.0]> : !rlx.tensor<[4], f32>
// CHECK-NEXT: %z = mir.constant dense<0.0> : !rlx.tensor<[], f32>
// CHECK-NEXT: %i = mir.constant dense<[1, 2, 3]> : !rlx.tensor<[3], i64>
// CHECK-NEXT: %t = mir.constant dense<[true, false]> : !rlx.tensor<[2], bool>
// CHECK-NEXT: %h = mir.constant dense<"0x0000C07F0000807F"> : !rlx.tensor<[2], f32>
// CHECK-NEXT: %add = mir.add %a, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %sub = mir.sub %add, %c : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %mul = mir.mul %sub, %z : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %div = mir.div %mul, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %pow = mir.pow %div, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %max = mir.max %pow, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %min = mir.min %max, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %neg = mir.neg %min : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %abs = mir.abs %neg : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %exp = mir.exp %abs : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %log = mir.log %exp : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %sqrt = mir.sqrt %log : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %rsqrt = mir.rsqrt %sqrt : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %tanh = mir.tanh %rsqrt : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %sig = mir.sigmoid %tanh : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %relu = mir.relu %sig : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %gelu = mir.gelu %relu : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %gelut = mir.gelu %gelu approximate tanh : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %silu = mir.silu %gelut : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %erf = mir.erf %silu : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %cmp = mir.compare lt, %erf, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], bool>
// CHECK-NEXT: %sel = mir.where %cmp, %erf, %z : (!rlx.tensor<[2, 4], bool>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %half = mir.cast %sel : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[2, 4], f16>
// CHECK-NEXT: %back = mir.cast %half : !rlx.tensor<[2, 4], f16> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: func.return %back, %cmp : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], bool>
// CHECK-LABEL: func.func @shapes() -> !rlx.tensor<[6, 2], f32> {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
// CHECK-NEXT: %idx = mir.input "idx" : !rlx.tensor<[5], i32>
// CHECK-NEXT: %x2 = mir.param "w" : !rlx.tensor<[4, 2], f32>
// CHECK-NEXT: %mm = mir.matmul %x, %x2 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[4, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
// CHECK-NEXT: %sum = mir.reduce_sum %x axes [0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3], f32>
// CHECK-NEXT: %mean = mir.reduce_mean %x axes [2] keepdims : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 1], f32>
// CHECK-NEXT: %rmax = mir.reduce_max %x axes [1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %rmin = mir.reduce_min %x axes [1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %lse = mir.reduce_log_sum_exp %x axes [0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3], f32>
// CHECK-NEXT: %lsek = mir.reduce_log_sum_exp %x axes [2] keepdims : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 1], f32>
// CHECK-NEXT: %ssq = mir.reduce_sum_square %x axes [0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3], f32>
// CHECK-NEXT: %l2 = mir.reduce_l2 %x axes [2] keepdims : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 1], f32>
// CHECK-NEXT: %l1 = mir.reduce_l1 %x axes [1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %lsum = mir.reduce_log_sum %x axes [0, 1, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[], f32>
// CHECK-NEXT: %am = mir.argmax %x axis 2 : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3], i64>
// CHECK-NEXT: %sm = mir.softmax %x axis 2 : !rlx.tensor<[2, 3, 4], f32>
// CHECK-NEXT: %r = mir.reshape %mm : !rlx.tensor<[2, 3, 2], f32> -> !rlx.tensor<[6, 2], f32>
// CHECK-NEXT: %tr = mir.transpose %x perm [2, 0, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[4, 2, 3], f32>
// CHECK-NEXT: %nar = mir.narrow %x axis 2 start 1 : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 2], f32>
// CHECK-NEXT: %sl = mir.slice %x starts [1, 0, 3] steps [1, 2, -2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[1, 2, 2], f32>
// CHECK-NEXT: %cat = mir.concat %x, %nar axis 2 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 2], f32>) -> !rlx.tensor<[2, 3, 6], f32>
// CHECK-NEXT: %exp = mir.expand %mean : !rlx.tensor<[2, 3, 1], f32> -> !rlx.tensor<[5, 2, 3, 4], f32>
// CHECK-NEXT: %g = mir.gather %x, %idx axis 2 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[2, 3, 5], f32>
// CHECK-NEXT: %gi = mir.constant dense<[0, 0, 2, -1]> : !rlx.tensor<[4], i64>
// CHECK-NEXT: %gei = mir.constant dense<[0, -1, 2, 1, -3, 2, 2, 0, -2, 1]> : !rlx.tensor<[2, 5, 1], i64>
// CHECK-NEXT: %ga = mir.gather_axes %x, %gi, %gi axes [1, 2] : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[4], i64>, !rlx.tensor<[4], i64>) -> !rlx.tensor<[2, 4, 4], f32>
// CHECK-NEXT: %ge = mir.gather_elements %x, %gei axis 1 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 5, 1], i64>) -> !rlx.tensor<[2, 5, 1], f32>
// CHECK-NEXT: %pad = mir.pad %x pads [0, 1, 2, 0, 0, 1] mode reflect : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4, 7], f32>
// CHECK-NEXT: %padc = mir.pad %x pads [0, 0, 1, 0, 0, 1] value -1.000000e+00 : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 6], f32>
// CHECK-NEXT: func.return %r : !rlx.tensor<[6, 2], f32>
// CHECK-LABEL: func.func @symbolic() -> !rlx.tensor<[batch, seq, 8], f32> {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[batch, seq, 16], f32>
// CHECK-NEXT: %w = mir.param "w" : !rlx.tensor<[16, 8], f32>
// CHECK-NEXT: %y = mir.matmul %x, %w : (!rlx.tensor<[batch, seq, 16], f32>, !rlx.tensor<[16, 8], f32>) -> !rlx.tensor<[batch, seq, 8], f32>
// CHECK-NEXT: %f = mir.reshape %y : !rlx.tensor<[batch, seq, 8], f32> -> !rlx.tensor<[batch, seq, 2, 4], f32>
// CHECK-NEXT: %u = mir.reshape %f : !rlx.tensor<[batch, seq, 2, 4], f32> -> !rlx.tensor<[batch, seq, 8], f32>
// CHECK-NEXT: func.return %u : !rlx.tensor<[batch, seq, 8], f32>
// CHECK-LABEL: func.func @may_agree() -> (!rlx.tensor<[n, 4, h], f32>, !rlx.tensor<[b, seq], f32>) {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[n, 2, h], f32>
// CHECK-NEXT: %u = mir.input "u" : !rlx.tensor<[n, 2, ((h + 1) floordiv 2) * 2], f32>
// CHECK-NEXT: %c = mir.concat %x, %u axis 1 : (!rlx.tensor<[n, 2, h], f32>, !rlx.tensor<[n, 2, ((h + 1) floordiv 2) * 2], f32>) -> !rlx.tensor<[n, 4, h], f32>
// CHECK-NEXT: %t = mir.input "t" : !rlx.tensor<[1, min(seq, 64)], f32>
// CHECK-NEXT: %e = mir.expand %t : !rlx.tensor<[1, min(seq, 64)], f32> -> !rlx.tensor<[b, seq], f32>
// CHECK-NEXT: func.return %c, %e : !rlx.tensor<[n, 4, h], f32>, !rlx.tensor<[b, seq], f32>
// CHECK-LABEL: func.func @nn() -> !rlx.tensor<[1, 4, 3, 3], f32> {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[1, 4, 8, 8], f32>
// CHECK-NEXT: %w = mir.param "w" : !rlx.tensor<[8, 2, 3, 3], f32>
// CHECK-NEXT: %g = mir.param "g" : !rlx.tensor<[8], f32>
// CHECK-NEXT: %b = mir.param "b" : !rlx.tensor<[8], f32>
// CHECK-NEXT: %conv = mir.conv %x, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 2 : (!rlx.tensor<[1, 4, 8, 8], f32>, !rlx.tensor<[8, 2, 3, 3], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
// CHECK-NEXT: %bn = mir.batch_norm %conv, %g, %b, %g, %b eps 1.000000e-05 : (!rlx.tensor<[1, 8, 4, 4], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
// CHECK-NEXT: %gn = mir.group_norm %bn, %g, %b groups 4 eps 1.000000e-05 : (!rlx.tensor<[1, 8, 4, 4], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
// CHECK-NEXT: %mp = mir.max_pool %x kernel [3, 3] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 4, 8, 8], f32> -> !rlx.tensor<[1, 4, 3, 3], f32>
// CHECK-NEXT: %ap = mir.avg_pool %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode count_include_pad : !rlx.tensor<[1, 4, 8, 8], f32> -> !rlx.tensor<[1, 4, 5, 5], f32>
// CHECK-NEXT: %fcba = mir.fused_conv_bias_act %x, %w, %b residual %conv strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 2 act relu : (!rlx.tensor<[1, 4, 8, 8], f32>, !rlx.tensor<[8, 2, 3, 3], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[1, 8, 4, 4], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
// CHECK-NEXT: %fssa = mir.fused_scale_shift_act %conv, %g, %b act clip act_params [0.000000e+00, 6.000000e+00] : (!rlx.tensor<[1, 8, 4, 4], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
// CHECK-NEXT: func.return %mp : !rlx.tensor<[1, 4, 3, 3], f32>
// CHECK-LABEL: func.func @transformer() -> !rlx.tensor<[1, 6, 32], f32> {
// CHECK-NEXT: %h = mir.input "h" : !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %q = mir.input "q" : !rlx.tensor<[1, 4, 6, 8], f32>
// CHECK-NEXT: %k = mir.input "k" : !rlx.tensor<[1, 2, 6, 8], f32>
// CHECK-NEXT: %m = mir.input "m" : !rlx.tensor<[1, 1, 6, 6], bool>
// CHECK-NEXT: %cos = mir.param "cos" : !rlx.tensor<[6, 4], f32>
// CHECK-NEXT: %sin = mir.param "sin" : !rlx.tensor<[6, 4], f32>
// CHECK-NEXT: %s = mir.param "s" : !rlx.tensor<[32], f32>
// CHECK-NEXT: %wqkv = mir.param "wqkv" : !rlx.tensor<[32, 64], f32>
// CHECK-NEXT: %bqkv = mir.param "bqkv" : !rlx.tensor<[64], f32>
// CHECK-NEXT: %wo = mir.param "wo" : !rlx.tensor<[32, 32], f32>
// CHECK-NEXT: %ln = mir.layer_norm %h, %s, %s axis 2 eps 1.000000e-05 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %rms = mir.rms_norm %ln, %s axis 2 eps 1.000000e-06 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %rq = mir.rope %q, %cos, %sin : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 4, 6, 8], f32>
// CHECK-NEXT: %rk = mir.rope %k, %cos, %sin rotary_dim 8 interleaved : (!rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
// CHECK-NEXT: %att = mir.attention %rq, %rk, %rk kind causal : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>) -> !rlx.tensor<[1, 4, 6, 8], f32>
// CHECK-NEXT: %attm = mir.attention %rq, %rk, %rk mask %m kind explicit scale 2.500000e-01 softcap 5.000000e+01 : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 1, 6, 6], bool>) -> !rlx.tensor<[1, 4, 6, 8], f32>
// CHECK-NEXT: %attz = mir.attention %rq, %rk, %rk mask %m kind explicit zero_nan : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 1, 6, 6], bool>) -> !rlx.tensor<[1, 4, 6, 8], f32>
// CHECK-NEXT: %fmba = mir.fused_matmul_bias_act %rms, %wqkv, %bqkv act silu : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 6, 64], f32>
// CHECK-NEXT: %sw = mir.fused_swiglu %fmba gate_first : !rlx.tensor<[1, 6, 64], f32> -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %n, %sum = mir.fused_residual_layer_norm %sw, %h, %s, %s axis 2 eps 1.000000e-05 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>)
// CHECK-NEXT: %n2, %sum2 = mir.fused_residual_rms_norm %n, %sum, %s axis 2 eps 1.000000e-06 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>)
// CHECK-NEXT: %fab = mir.fused_attention_block %n2, %wqkv, %wo qkv_bias(%bqkv : !rlx.tensor<[64], f32>) rope(%cos, %sin : !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) heads 4 kv_heads 2 head_dim 8 kind causal : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %fabz = mir.fused_attention_block %n2, %wqkv, %wo qkv_bias(%bqkv : !rlx.tensor<[64], f32>) rope(%cos, %sin : !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) heads 4 kv_heads 2 head_dim 8 kind causal zero_nan : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: func.return %fab : !rlx.tensor<[1, 6, 32], f32>
// CHECK-LABEL: func.func @quant() -> !rlx.tensor<[4, 8], f32> {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[4, 8], f32>
// CHECK-NEXT: %s = mir.constant dense<0.05> : !rlx.tensor<[], f32>
// CHECK-NEXT: %zp = mir.constant dense<0> : !rlx.tensor<[], i8>
// CHECK-NEXT: %sc = mir.param "sc" : !rlx.tensor<[8], f32>
// CHECK-NEXT: %zc = mir.param "zc" : !rlx.tensor<[8], i8>
// CHECK-NEXT: %q = mir.quantize %x, %s, %zp : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4, 8], i8>
// CHECK-NEXT: %dq = mir.dequantize %q, %s, %zp : (!rlx.tensor<[4, 8], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4, 8], f32>
// CHECK-NEXT: %qc = mir.quantize %x, %sc, %zc axis 1 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], i8>) -> !rlx.tensor<[4, 8], i8>
// CHECK-NEXT: %q8 = mir.quantize %x, %s : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4, 8], f8e4m3>
// CHECK-NEXT: %fq = mir.fake_quantize %dq, %s, %zp range -128 to 127 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4, 8], f32>
// CHECK-NEXT: func.return %fq : !rlx.tensor<[4, 8], f32>

func.func @region() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %r = mir.elementwise_region(%x, %b) : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32> {
  ^bb0(%a: !rlx.tensor<[2, 4], f32>, %c: !rlx.tensor<[4], f32>):
    %s = mir.add %a, %c : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
    %t = mir.compare gt, %s, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], bool>
    %u = mir.where %t, %s, %a : (!rlx.tensor<[2, 4], bool>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
    mir.yield %u : !rlx.tensor<[2, 4], f32>
  }
  func.return %r : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @region() -> !rlx.tensor<[2, 4], f32> {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %b = mir.param "b" : !rlx.tensor<[4], f32>
// CHECK-NEXT: %r = mir.elementwise_region(%x, %b) : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32> {
// CHECK-NEXT: ^bb0(%a: !rlx.tensor<[2, 4], f32>, %c: !rlx.tensor<[4], f32>):
// CHECK-NEXT:   %s = mir.add %a, %c : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:   %t = mir.compare gt, %s, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], bool>
// CHECK-NEXT:   %u = mir.where %t, %s, %a : (!rlx.tensor<[2, 4], bool>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:   mir.yield %u : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %r : !rlx.tensor<[2, 4], f32>

// Dims held as properties (#rlx.dim, registered with the rlx types) survive the generic
// form too.
func.func @dims_as_properties() -> (!rlx.tensor<[2], i64>, !rlx.tensor<[1, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[seq, 4], f32>
  %d = mir.dims [seq, seq * 2 + 1] : !rlx.tensor<[2], i64>
  %n = mir.narrow %x axis 0 start seq - 1 : !rlx.tensor<[seq, 4], f32> -> !rlx.tensor<[1, 4], f32>
  func.return %d, %n : !rlx.tensor<[2], i64>, !rlx.tensor<[1, 4], f32>
}
// CHECK-LABEL: func.func @dims_as_properties()
// CHECK-NEXT:  %x = mir.input "x" : !rlx.tensor<[seq, 4], f32>
// CHECK-NEXT:  %d = mir.dims [seq, seq * 2 + 1] : !rlx.tensor<[2], i64>
// CHECK-NEXT:  %n = mir.narrow %x axis 0 start seq - 1 : !rlx.tensor<[seq, 4], f32> -> !rlx.tensor<[1, 4], f32>

// Recurrent layers: each one op (one direction or two, states, sequence_lens, the
// batch-major layout, activations, clip, GRU's and LSTM's flags, 8-bit LSTM weights).
func.func @recurrent() -> (!rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[2, seq, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[seq, 1, 2, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[seq, 2, 3], f32>
  %xb = mir.input "xb" : !rlx.tensor<[2, seq, 3], f32>
  %lens = mir.input "lens" : !rlx.tensor<[2], i32>
  %h0 = mir.input "h0" : !rlx.tensor<[2, 2, 4], f32>
  %c0 = mir.input "c0" : !rlx.tensor<[2, 2, 4], f32>
  %rw = mir.param "rw" : !rlx.tensor<[1, 4, 3], f32>
  %rr = mir.param "rr" : !rlx.tensor<[1, 4, 4], f32>
  %gw = mir.param "gw" : !rlx.tensor<[2, 12, 3], f32>
  %gr = mir.param "gr" : !rlx.tensor<[2, 12, 4], f32>
  %gb = mir.param "gb" : !rlx.tensor<[2, 24], f32>
  %lw = mir.param "lw" : !rlx.tensor<[2, 16, 3], f32>
  %lr = mir.param "lr" : !rlx.tensor<[2, 16, 4], f32>
  %lb = mir.param "lb" : !rlx.tensor<[2, 32], f32>
  %lp = mir.param "lp" : !rlx.tensor<[2, 12], f32>
  %qw = mir.constant dense<3> : !rlx.tensor<[1, 16, 3], i8>
  %qr = mir.constant dense<130> : !rlx.tensor<[1, 16, 4], u8>
  %qws = mir.param "qws" : !rlx.tensor<[1, 16], f32>
  %qrs = mir.param "qrs" : !rlx.tensor<[1], f32>
  %qrz = mir.constant dense<128> : !rlx.tensor<[1], u8>
  %ry, %rh = mir.rnn %x, %rw, %rr lens(%lens : !rlx.tensor<[2], i32>) direction reverse activations ["leaky_relu"] alpha [1.000000e-01] beta [0.000000e+00] clip 2.000000e+00 : (!rlx.tensor<[seq, 2, 3], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  %gy, %gh = mir.gru %xb, %gw, %gr bias(%gb : !rlx.tensor<[2, 24], f32>) direction bidirectional batch_first linear_before_reset : (!rlx.tensor<[2, seq, 3], f32>, !rlx.tensor<[2, 12, 3], f32>, !rlx.tensor<[2, 12, 4], f32>) -> (!rlx.tensor<[2, seq, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
  %ly, %lh, %lc = mir.lstm %x, %lw, %lr bias(%lb : !rlx.tensor<[2, 32], f32>) lens(%lens : !rlx.tensor<[2], i32>) h0(%h0 : !rlx.tensor<[2, 2, 4], f32>) c0(%c0 : !rlx.tensor<[2, 2, 4], f32>) peepholes(%lp : !rlx.tensor<[2, 12], f32>) direction bidirectional input_forget : (!rlx.tensor<[seq, 2, 3], f32>, !rlx.tensor<[2, 16, 3], f32>, !rlx.tensor<[2, 16, 4], f32>) -> (!rlx.tensor<[seq, 2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
  %qy, %qh, %qc = mir.lstm %x, %qw, %qr w_scale(%qws : !rlx.tensor<[1, 16], f32>) r_scale(%qrs : !rlx.tensor<[1], f32>) r_zero_point(%qrz : !rlx.tensor<[1], u8>) : (!rlx.tensor<[seq, 2, 3], f32>, !rlx.tensor<[1, 16, 3], i8>, !rlx.tensor<[1, 16, 4], u8>) -> (!rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return %ry, %gy, %lc, %qy : !rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[2, seq, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[seq, 1, 2, 4], f32>
}
// CHECK-LABEL: func.func @recurrent() -> (!rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[2, seq, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[seq, 1, 2, 4], f32>) {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[seq, 2, 3], f32>
// CHECK-NEXT: %xb = mir.input "xb" : !rlx.tensor<[2, seq, 3], f32>
// CHECK-NEXT: %lens = mir.input "lens" : !rlx.tensor<[2], i32>
// CHECK-NEXT: %h0 = mir.input "h0" : !rlx.tensor<[2, 2, 4], f32>
// CHECK-NEXT: %c0 = mir.input "c0" : !rlx.tensor<[2, 2, 4], f32>
// CHECK-NEXT: %rw = mir.param "rw" : !rlx.tensor<[1, 4, 3], f32>
// CHECK-NEXT: %rr = mir.param "rr" : !rlx.tensor<[1, 4, 4], f32>
// CHECK-NEXT: %gw = mir.param "gw" : !rlx.tensor<[2, 12, 3], f32>
// CHECK-NEXT: %gr = mir.param "gr" : !rlx.tensor<[2, 12, 4], f32>
// CHECK-NEXT: %gb = mir.param "gb" : !rlx.tensor<[2, 24], f32>
// CHECK-NEXT: %lw = mir.param "lw" : !rlx.tensor<[2, 16, 3], f32>
// CHECK-NEXT: %lr = mir.param "lr" : !rlx.tensor<[2, 16, 4], f32>
// CHECK-NEXT: %lb = mir.param "lb" : !rlx.tensor<[2, 32], f32>
// CHECK-NEXT: %lp = mir.param "lp" : !rlx.tensor<[2, 12], f32>
// CHECK-NEXT: %qw = mir.constant dense<3> : !rlx.tensor<[1, 16, 3], i8>
// CHECK-NEXT: %qr = mir.constant dense<130> : !rlx.tensor<[1, 16, 4], u8>
// CHECK-NEXT: %qws = mir.param "qws" : !rlx.tensor<[1, 16], f32>
// CHECK-NEXT: %qrs = mir.param "qrs" : !rlx.tensor<[1], f32>
// CHECK-NEXT: %qrz = mir.constant dense<128> : !rlx.tensor<[1], u8>
// CHECK-NEXT: %ry, %rh = mir.rnn %x, %rw, %rr lens(%lens : !rlx.tensor<[2], i32>) direction reverse activations ["leaky_relu"] alpha [1.000000e-01] beta [0.000000e+00] clip 2.000000e+00 : (!rlx.tensor<[seq, 2, 3], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
// CHECK-NEXT: %gy, %gh = mir.gru %xb, %gw, %gr bias(%gb : !rlx.tensor<[2, 24], f32>) direction bidirectional batch_first linear_before_reset : (!rlx.tensor<[2, seq, 3], f32>, !rlx.tensor<[2, 12, 3], f32>, !rlx.tensor<[2, 12, 4], f32>) -> (!rlx.tensor<[2, seq, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
// CHECK-NEXT: %ly, %lh, %lc = mir.lstm %x, %lw, %lr bias(%lb : !rlx.tensor<[2, 32], f32>) lens(%lens : !rlx.tensor<[2], i32>) h0(%h0 : !rlx.tensor<[2, 2, 4], f32>) c0(%c0 : !rlx.tensor<[2, 2, 4], f32>) peepholes(%lp : !rlx.tensor<[2, 12], f32>) direction bidirectional input_forget : (!rlx.tensor<[seq, 2, 3], f32>, !rlx.tensor<[2, 16, 3], f32>, !rlx.tensor<[2, 16, 4], f32>) -> (!rlx.tensor<[seq, 2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
// CHECK-NEXT: %qy, %qh, %qc = mir.lstm %x, %qw, %qr w_scale(%qws : !rlx.tensor<[1, 16], f32>) r_scale(%qrs : !rlx.tensor<[1], f32>) r_zero_point(%qrz : !rlx.tensor<[1], u8>) : (!rlx.tensor<[seq, 2, 3], f32>, !rlx.tensor<[1, 16, 3], i8>, !rlx.tensor<[1, 16, 4], u8>) -> (!rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
// CHECK-NEXT: func.return %ry, %gy, %lc, %qy : !rlx.tensor<[seq, 1, 2, 4], f32>, !rlx.tensor<[2, seq, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[seq, 1, 2, 4], f32>
