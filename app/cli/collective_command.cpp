// stepscope-cli collective: the collective benchmark's flags, its progress on
// stderr, its table (or JSON) on stdout and its file.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "experiments/collective_benchmark.h"
#include "util/atomic_file.h"
#include "util/strings.h"

namespace stepscope::cli {

namespace {

std::string rowNotes(const CollectiveRow& row) {
    std::string notes;
    if (!row.emulated.empty()) {
        notes += row.backend + " runs it as an " + row.emulated + " of the whole size";
    }
    if (row.oversubscribed) {
        notes += std::string(notes.empty() ? "" : "; ") + "more ranks than cores";
    }
    if (row.status != "ok") {
        notes = row.message + (notes.empty() ? "" : "; " + notes);
    }
    return notes;
}

}  // namespace

std::string formatCollectiveTable(const CollectiveFile& file) {
    std::ostringstream out;
    out << "op                  size  ranks  status     time us    min us    max us  algbw GB/s  "
           "busbw GB/s  notes\n";
    for (const CollectiveRow& row : file.rows) {
        char line[200];
        std::snprintf(line, sizeof line, "%-14s %10s %6d  %-7s", row.op.c_str(),
                      formatBytes(double(row.sizeBytes)).c_str(), row.ranks, row.status.c_str());
        out << line;
        if (row.status == "ok") {
            std::snprintf(line, sizeof line, " %10.1f %9.1f %9.1f %11.3f %11.3f", row.timeUs,
                          row.minUs, row.maxUs, row.algbwGbps, row.busbwGbps);
        } else {
            std::snprintf(line, sizeof line, " %10s %9s %9s %11s %11s", "-", "-", "-", "-", "-");
        }
        out << line << "  " << rowNotes(row) << "\n";
    }
    out << "\ntime: the median over the timed calls of each call's slowest rank (min, max: the "
           "least and most of those); algbw = size / time; busbw = algbw × 2(n-1)/n for "
           "all_reduce, (n-1)/n for all_gather and reduce_scatter, 1 for broadcast (nccl-tests' "
           "definitions; size: all_gather's output, reduce_scatter's input). Each call is timed "
           "alone after a barrier, so small sizes read slower than nccl-tests' back-to-back "
           "average.\n";
    return out.str();
}

std::optional<CollectiveSpec> withParsedSizes(const CollectiveSpec& spec,
                                              const std::vector<std::string>& sizes) {
    CollectiveSpec parsed = spec;
    parsed.sizesBytes.clear();
    for (const std::string& size : sizes) {
        const auto bytes = parseByteSize(size);
        if (!bytes) {
            std::cerr << "stepscope-cli: --sizes: '" << size
                      << "' is not a size from 1 byte to 1 TiB: a number of bytes, or with "
                         "K, M or G (powers of 1024, as nccl-tests reads them: 1MB = "
                         "1048576 bytes)\n";
            return std::nullopt;
        }
        parsed.sizesBytes.push_back(*bytes);
    }
    return parsed;
}

int commandCollective(const CollectiveSpec& spec, const std::vector<std::string>& sizes,
                      const std::string& outFile, bool json) {
    return guarded([&] {
        const auto withSizes = withParsedSizes(spec, sizes);
        if (!withSizes) {
            return kExitBadInput;
        }
        const CollectiveSpec& parsed = *withSizes;
        if (const auto problem = collectiveSpecProblem(parsed)) {
            std::cerr << "stepscope-cli: " << *problem << "\n";
            return kExitBadInput;
        }
        if (!outFile.empty()) {
            if (const auto why = whyCannotWriteFile(outFile)) {
                std::cerr << "stepscope-cli: --out: " << *why << "\n";
                return kExitBadInput;
            }
        }
        CollectiveFile file;
        CollectiveObserver observer;
        CollectiveProgress progress;
        observer.onProgress = [&](const CollectiveProgress& now) { progress = now; };
        observer.onRow = [&](const CollectiveRow& row) {
            std::cerr << "  [" << progress.done + 1 << "/" << progress.total << "] " << row.op
                      << " " << formatBytes(double(row.sizeBytes)) << " on " << row.ranks
                      << " ranks: " << row.status << "\n";
        };
        std::string failure;
        try {
            runCollectiveBenchmark(parsed, file, checkedCancel(), observer);
        } catch (const std::runtime_error& error) {
            failure = error.what();  // the rows so far are still written and shown
        }
        if (!outFile.empty()) {
            writeFileAtomically(outFile, collectiveFileToJson(file));
            std::cerr << "stepscope-cli: collective rows written to " << outFile << "\n";
        }
        std::cout << (json ? collectiveFileToJson(file) : formatCollectiveTable(file));
        if (!failure.empty()) {
            std::cerr << "stepscope-cli: " << failure << "\n";
            return kExitRunFailed;
        }
        return cancelRequested().load() ? kExitRunFailed : kExitOk;
    });
}

}  // namespace stepscope::cli
