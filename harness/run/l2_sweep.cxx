#include "harness/run/l2_sweep.hxx"

namespace harness::run {

std::string_view l2_sweep_ptx()
{
    return R"(.version 7.0
.target sm_70
.address_size 64

.visible .entry harness_l2_sweep(.param .u64 data, .param .u64 count, .param .u64 sink)
{
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;

    ld.param.u64 %rd1, [data];
    ld.param.u64 %rd2, [count];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd3, %r1, %r2;
    cvt.u64.u32 %rd4, %r3;
    add.u64 %rd3, %rd3, %rd4;
    mul.wide.u32 %rd5, %r4, %r2;
    mov.u32 %r5, 0;
LOOP:
    setp.ge.u64 %p1, %rd3, %rd2;
    @%p1 bra DONE;
    shl.b64 %rd6, %rd3, 4;
    add.u64 %rd7, %rd1, %rd6;
    ld.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd7];
    xor.b32 %r5, %r5, %r6;
    xor.b32 %r5, %r5, %r7;
    xor.b32 %r5, %r5, %r8;
    xor.b32 %r5, %r5, %r9;
    add.u64 %rd3, %rd3, %rd5;
    bra LOOP;
DONE:
    setp.ne.u32 %p2, %r5, 1540483477;
    @%p2 bra END;
    ld.param.u64 %rd8, [sink];
    cvta.to.global.u64 %rd8, %rd8;
    st.global.u32 [%rd8], %r5;
END:
    ret;
}
)";
}

} // namespace harness::run
