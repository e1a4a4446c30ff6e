// The emulated runtime's blocks: each thread of a block a fiber with a stack
// of its own on the OS thread that runs the block (a stream's worker),
// switched at __syncthreads, shuffles and warp-wide exchanges (blocks.hpp).
#include "blocks.hpp"

#include <cuda_runtime.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <vector>

using accel::cuda::emulation::IllegalInBlock;

namespace {
constexpr std::size_t kFiberStack = 64 * 1024;
}  // namespace

// Switches stacks: saves the callee-saved registers, MXCSR and the x87
// control word on the current stack, stores the stack pointer in *from,
// and resumes the stack `to` saved the same way (System V x86-64 ABI). No
// system call, unlike swapcontext, which saves the signal mask each time.
extern "C" void accel_emulation_switch(void** from, void* to);
asm(R"(
    .text
    .globl accel_emulation_switch
    .hidden accel_emulation_switch
    .type accel_emulation_switch, @function
accel_emulation_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size accel_emulation_switch, .-accel_emulation_switch
)");

namespace {

// One emulated thread of a block: a stack that runs the kernel body, stops at
// each __syncthreads, and, when the body returns, waits to run it again for
// the next block (fibers live as long as their OS thread).
struct Fiber {
    char* stack = nullptr;
    void* sp = nullptr;  // saved stack pointer while switched out
    uint3 index{};
    enum { waiting, done } state = done;
};

// One block being run on this OS thread.
struct BlockRun {
    void* scheduler = nullptr;  // the scheduler's saved stack pointer
    std::vector<Fiber>* fibers = nullptr;
    std::size_t current = 0, threads = 0;
    bool direct = false;  // the remaining threads are plain calls
    const std::function<void()>* body = nullptr;
    const char* failure = nullptr;  // an IllegalInBlock a fiber's thread raised
    unsigned exchanges[1024] = {};  // warp exchanges each thread has made
};

thread_local BlockRun* tl_block = nullptr;

constexpr IllegalInBlock kDivergentBarrier{": __syncthreads() reached by only some of its threads"};
constexpr IllegalInBlock kShuffleOutOfBlock{": a shuffle read a lane past its last thread"};
constexpr IllegalInBlock kExchangeOutOfBlock{": a warp-wide operation (ldmatrix, mma) in a warp of fewer than 32 threads"};

// The values the threads of the running block publish in a shuffle (every
// thread of a block runs on this OS thread).
thread_local std::uint64_t tl_shuffle[1024];

[[noreturn]] void fiber_main() {
    for (;;) {
        BlockRun& r = *tl_block;
        try {
            (*r.body)();
        } catch (const IllegalInBlock& e) {  // no frame to unwind into past this one: the scheduler rethrows
            r.failure = e.what;
        }
        Fiber& f = (*r.fibers)[r.current];
        f.state = Fiber::done;
        accel_emulation_switch(&f.sp, r.scheduler);
    }
}

// A fresh stack whose first switch-in "returns" into fiber_main with the
// alignment of a call (rsp ≡ 8 mod 16), default MXCSR and x87 control word.
void* initial_stack(char* stack) {
    auto* top = reinterpret_cast<std::uintptr_t*>(stack + kFiberStack);  // 16-byte aligned (mmap)
    *--top = 0;                                                          // fiber_main's return address: never used
    *--top = reinterpret_cast<std::uintptr_t>(&fiber_main);
    for (int reg = 0; reg < 6; ++reg) *--top = 0;  // rbp, rbx, r12..r15
    *--top = 0x1F80 | (std::uintptr_t{0x037F} << 32);  // MXCSR, x87 control word
    return top;
}

// The fibers of one OS thread, their stacks unmapped when the thread ends.
struct FiberPool {
    std::vector<Fiber> fibers;
    ~FiberPool() {
        for (Fiber& f : fibers) munmap(f.stack, kFiberStack);
    }
};

std::vector<Fiber>& fiber_pool(std::size_t n) {
    thread_local FiberPool pool;
    while (pool.fibers.size() < n) {
        Fiber f;
        void* p = mmap(nullptr, kFiberStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        f.stack = static_cast<char*>(p);
        f.sp = initial_stack(f.stack);
        pool.fibers.push_back(f);
    }
    return pool.fibers;
}

uint3 thread_index(std::size_t t, dim3 b) {
    return uint3{static_cast<unsigned>(t % b.x), static_cast<unsigned>(t / b.x % b.y),
                 static_cast<unsigned>(t / (static_cast<std::size_t>(b.x) * b.y))};
}

void resume(BlockRun& r, std::size_t t) {
    Fiber& f = (*r.fibers)[t];
    r.current = t;
    threadIdx = f.index;
    accel_emulation_switch(&r.scheduler, f.sp);
}

void start(BlockRun& r, std::size_t t) {
    Fiber& f = (*r.fibers)[t];
    f.index = thread_index(t, blockDim);
    f.state = Fiber::waiting;
    resume(r, t);
}

}  // namespace

namespace accel {
namespace cuda {
namespace emulation {

void run_block(const std::function<void()>& body, std::size_t threads) {
    // Whichever way the block ends, this OS thread runs none afterwards.
    struct Reset {
        ~Reset() { tl_block = nullptr; }
    } reset;
    BlockRun r;
    r.fibers = &fiber_pool(threads);
    r.threads = threads;
    r.body = &body;
    tl_block = &r;
    // A thread that failed ends the block: the others' stacks are abandoned
    // where they wait (their frames hold no resources of the emulation's).
    const auto check = [&r] {
        if (!r.failure) return;
        for (Fiber& f : *r.fibers)
            if (f.state == Fiber::waiting) {
                f.sp = initial_stack(f.stack);
                f.state = Fiber::done;
            }
        throw IllegalInBlock{r.failure};
    };
    start(r, 0);
    check();
    if ((*r.fibers)[0].state == Fiber::done) {
        // No barrier on thread 0's path, so (barriers being block-uniform) on none.
        r.direct = true;
        for (std::size_t t = 1; t < threads; ++t) {
            threadIdx = thread_index(t, blockDim);
            body();
        }
    } else {
        for (std::size_t t = 1; t < threads; ++t) {
            start(r, t);
            check();
        }
        // Every live thread now waits at the barrier: release them, in turn, to the next one.
        for (bool live = true; live;) {
            live = false;
            for (std::size_t t = 0; t < threads; ++t)
                if ((*r.fibers)[t].state == Fiber::waiting) {
                    live = true;
                    resume(r, t);
                    check();
                }
        }
    }
}

}  // namespace emulation
}  // namespace cuda
}  // namespace accel

void __syncthreads() {
    BlockRun* r = tl_block;
    if (!r || r->threads == 1) return;
    if (r->direct) throw kDivergentBarrier;
    Fiber& f = (*r->fibers)[r->current];
    f.state = Fiber::waiting;
    accel_emulation_switch(&f.sp, r->scheduler);
}

namespace accel {
namespace cuda {
namespace emulation {

void shuffle(const void* value, void* out, std::size_t bytes, unsigned source) {
    BlockRun* r = tl_block;
    const std::size_t threads = r ? r->threads : 1;
    const std::size_t t = threadIdx.x + static_cast<std::size_t>(blockDim.x) * (threadIdx.y + static_cast<std::size_t>(blockDim.y) * threadIdx.z);
    if (source >= threads) throw kShuffleOutOfBlock;
    std::memcpy(&tl_shuffle[t], value, bytes);
    __syncthreads();
    std::memcpy(out, &tl_shuffle[source], bytes);
    __syncthreads();
}

void illegal_in_block(const char* what) { throw IllegalInBlock{what}; }

const unsigned char* warp_exchange(const void* value, std::size_t bytes) {
    constexpr std::size_t kLanes = 32;
    // Two sets of slots, used in turn: a thread writes set p only after the
    // barrier of the exchange before, which every thread reaches after it has
    // read set p of the exchange before that. So one barrier per exchange.
    alignas(16) thread_local unsigned char published[2][1024][kMaxExchangeBytes];
    BlockRun* r = tl_block;
    const std::size_t threads = r ? r->threads : 1;
    const std::size_t t = threadIdx.x + static_cast<std::size_t>(blockDim.x) * (threadIdx.y + static_cast<std::size_t>(blockDim.y) * threadIdx.z);
    const std::size_t first = t - t % kLanes;
    if (!r || bytes > kMaxExchangeBytes || first + kLanes > threads) throw kExchangeOutOfBlock;
    const unsigned set = r->exchanges[t]++ % 2;
    std::memcpy(published[set][t], value, bytes);
    __syncthreads();
    return published[set][first];
}

}  // namespace emulation
}  // namespace cuda
}  // namespace accel
