// A plain main() for a libFuzzer target, for CTest where no fuzzing engine is
// built: each seed file as is, then COUNT inputs made by mutating the seeds
// (a fixed random seed, so a failure repeats). A crash fails the test; the
// last input is written to LAST_INPUT first, so it can be fed to the target.
//
//   fuzz_x SEED_DIR COUNT [--seed N] [--max-bytes N] [--last-input PATH]
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

struct Options {
    std::filesystem::path seedDir;
    long count = 0;
    uint64_t seed = 28;
    size_t maxBytes = 1 << 20;  // seeds larger than this are skipped (timing fixtures)
    std::filesystem::path lastInput;
};

[[noreturn]] void usage(const std::string& why) {
    std::cerr << why << "\nusage: fuzz_x SEED_DIR COUNT [--seed N] [--max-bytes N] "
              << "[--last-input PATH]\n";
    std::exit(2);
}

Options parseOptions(int argc, char** argv) {
    if (argc < 3) {
        usage("needs SEED_DIR and COUNT");
    }
    Options options;
    options.seedDir = argv[1];
    options.count = std::strtol(argv[2], nullptr, 10);
    if (options.count < 0) {
        usage("COUNT must be 0 or more");
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--seed") {
            options.seed = std::strtoull(argv[i + 1], nullptr, 10);
        } else if (flag == "--max-bytes") {
            options.maxBytes = std::strtoull(argv[i + 1], nullptr, 10);
        } else if (flag == "--last-input") {
            options.lastInput = argv[i + 1];
        } else {
            usage("unknown flag " + flag + " (allowed: --seed, --max-bytes, --last-input)");
        }
    }
    return options;
}

std::vector<std::string> readSeeds(const Options& options) {
    std::vector<std::filesystem::path> paths;
    for (const auto& entry : std::filesystem::directory_iterator(options.seedDir)) {
        if (entry.is_regular_file() && entry.file_size() <= options.maxBytes) {
            paths.push_back(entry.path());
        }
    }
    std::sort(paths.begin(), paths.end());  // the same order on every machine
    std::vector<std::string> seeds;
    for (const auto& path : paths) {
        std::ifstream in(path, std::ios::binary);
        seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (seeds.empty()) {
        usage("no seed files in " + options.seedDir.string());
    }
    return seeds;
}

// One of the edits libFuzzer's own mutator makes most: flip, set, insert,
// erase, copy a piece elsewhere, cut the end.
void mutateOnce(std::string& input, std::mt19937_64& random) {
    const auto pick = [&](size_t bound) {
        return bound == 0 ? size_t{0} : static_cast<size_t>(random() % bound);
    };
    static constexpr char kInteresting[] = {
        0, 1, 0x7f, static_cast<char>(0x80), static_cast<char>(0xff), '.', '(', ']'};
    switch (random() % 6) {
        case 0:
            if (!input.empty()) {
                input[pick(input.size())] ^= static_cast<char>(1u << (random() % 8));
            }
            break;
        case 1:
            if (!input.empty()) {
                input[pick(input.size())] = kInteresting[pick(sizeof(kInteresting))];
            }
            break;
        case 2:
            input.insert(pick(input.size() + 1), 1, static_cast<char>(random()));
            break;
        case 3:
            if (!input.empty()) {
                const size_t at = pick(input.size());
                input.erase(at, 1 + pick(std::min<size_t>(16, input.size() - at)));
            }
            break;
        case 4:
            if (!input.empty()) {
                const size_t from = pick(input.size());
                const std::string piece = input.substr(from, 1 + pick(32));
                input.insert(pick(input.size() + 1), piece);
            }
            break;
        default:
            input.resize(pick(input.size() + 1));
            break;
    }
}

void runOne(const std::string& input, const Options& options) {
    if (!options.lastInput.empty()) {
        std::ofstream(options.lastInput, std::ios::binary | std::ios::trunc) << input;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parseOptions(argc, argv);
    const std::vector<std::string> seeds = readSeeds(options);
    for (const std::string& seed : seeds) {
        runOne(seed, options);
    }
    std::mt19937_64 random(options.seed);
    for (long i = 0; i < options.count; ++i) {
        std::string input = seeds[random() % seeds.size()];
        const int edits = 1 + static_cast<int>(random() % 8);
        for (int e = 0; e < edits; ++e) {
            mutateOnce(input, random);
        }
        runOne(input, options);
    }
    std::cout << seeds.size() << " seeds and " << options.count << " mutated inputs: no crash\n";
    return 0;
}
