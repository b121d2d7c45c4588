/* Reset, vector table and semihosting for a Cortex-M under QEMU (no heap, no OS). */
#include <stdint.h>
#include <string.h>

extern uint32_t _etext, _sdata, _edata, _sbss, _ebss, _sstack, _estack;
int main(void);

#define STACK_PAINT 0xC0FFEE11u

/* Arm semihosting: r0 = operation, r1 = its argument block. */
int rlx_semihost(int op, void *arg) {
    register int r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void rlx_exit(int code) {
    /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with the code */
    uint32_t block[2] = {0x20026u, (uint32_t)code};
    rlx_semihost(0x20, block);
    for (;;) {
    }
}

/* Bytes of stack used so far: the painted words the stack never overwrote stay. */
uint32_t rlx_stack_used(void) {
    const uint32_t *p = &_sstack;
    while (p < &_estack && *p == STACK_PAINT) p++;
    return (uint32_t)((const uint8_t *)&_estack - (const uint8_t *)p);
}

void Reset_Handler(void) {
    uint32_t *src = &_etext, *dst = &_sdata, *p;
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    uint32_t sp;
    *cpacr |= 0xFu << 20; /* the FPU: CP10 and CP11 full access */
    __asm__ volatile("dsb\n isb" ::: "memory");
    while (dst < &_edata) *dst++ = *src++;
    for (dst = &_sbss; dst < &_ebss; dst++) *dst = 0;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (p = &_sstack; (uintptr_t)p < sp - 64; p++) *p = STACK_PAINT;
    rlx_exit(main());
}

static void fault(void) { rlx_exit(3); }

__attribute__((section(".vectors"), used)) static const void *const vectors[16] = {
    &_estack, (const void *)Reset_Handler, (const void *)fault, (const void *)fault,
    (const void *)fault, (const void *)fault, (const void *)fault,
};
