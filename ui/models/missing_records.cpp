#include "models/missing_records.h"

#include <QCoreApplication>
#include <QStringList>

#include "models/run_document.h"

namespace stepscope::ui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("MissingRecords", text);
}

// What made the document, as far as what it can hold goes.
enum class Source { Ours, Snapshot, Trace, PyTorch };

Source sourceOf(const RunDocument& document) {
    if (document.snapshot() || document.result.origin == kOriginMemorySnapshot) {
        return Source::Snapshot;
    }
    if (document.trace() || document.result.origin == kOriginProfilerTrace) {
        return Source::Trace;
    }
    return document.canShowConfig() ? Source::Ours : Source::PyTorch;
}

// The panel's options that record `records`, as ticked in `config`
// ("“Trace operators”"); empty when none is.
QString tickedOptions(const RunConfig& config, Records records) {
    QStringList ticked;
    if (records == Records::Memory) {
        if (config.traceMemory) {
            ticked << tr("“Trace memory”");
        }
    } else {
        if (config.traceOps) {
            ticked << tr("“Trace operators”");
        }
        if (config.traceKernels) {
            ticked << tr("“Trace CUDA kernels”");
        }
    }
    return ticked.join(tr(" and "));
}

QString recordsName(Records records) {
    switch (records) {
        case Records::Steps:
            return tr("steps");
        case Records::Operators:
            return tr("operator and kernel records");
        case Records::Timeline:
            return tr("traced step");
        case Records::Ranks:
            return tr("ranks");
        case Records::Memory:
            break;
    }
    return tr("memory trace");
}

// "the traced step arrives", "the operator and kernel records arrive".
QString arrives(Records records) {
    return records == Records::Operators ? tr("the %1 arrive").arg(recordsName(records))
                                         : tr("the %1 arrives").arg(recordsName(records));
}

// A run of ours that never traced `records`: what to tick, or the CLI's flag.
QString howToRecord(Records records) {
    return records == Records::Memory
               ? tr("This run has no memory trace. Tick “Trace memory” before running, or make "
                    "it with stepscope-cli run --memory.")
           : records == Records::Timeline
               ? tr("This run has no traced step. Tick “Trace operators” (or “Trace CUDA "
                    "kernels” on a GPU) before running to see its operators and kernels here.")
               : tr("This run has no operator or kernel records. Tick “Trace operators” (or "
                    "“Trace CUDA kernels” on a GPU) before running, or make it with "
                    "stepscope-cli run --ops / --kernels.");
}

// A run of ours on one process, or on ranks none of which has finished a step.
QString ranksText(const RunDocument& document) {
    const RunResult& result = document.result;
    if (result.config.ranks <= 1) {
        return tr(
            "This run ran in one process. Set Ranks to 2 or more and a strategy under "
            "Distributed in the panel, or run stepscope-cli run --engine pytorch --ranks 2 "
            "--parallel overlap, to see each rank's steps and collectives here.");
    }
    return document.live ? tr("No rank has finished a step yet: each rank's steps appear here "
                              "as they end.")
                         : tr("The run ended (%1) before any rank finished a step.")
                               .arg(QString::fromStdString(toString(result.status)));
}

QString ourRunText(const RunDocument& document, Records records) {
    const RunResult& result = document.result;
    const QString status = QString::fromStdString(toString(result.status));
    if (records == Records::Ranks) {
        return ranksText(document);
    }
    if (records == Records::Steps) {
        return document.live || result.status == RunStatus::Ok
                   ? tr("No steps measured yet: each appears here as it ends.")
                   : tr("The run ended (%1) before its first measured step.").arg(status);
    }
    const QString ticked = tickedOptions(result.config, records);
    if (ticked.isEmpty()) {
        return document.live
                   ? tr("This run does not record its %1 (%2 was off when it started); tick it "
                        "for the next run.")
                         .arg(recordsName(records), records == Records::Memory
                                                        ? tr("“Trace memory”")
                                                        : tr("“Trace operators”"))
                   : howToRecord(records);
    }
    if (document.live) {
        return tr("%1 is on: %2 with the run's result when it ends, after its last measured "
                  "step.")
            .arg(ticked, arrives(records));
    }
    return tr("%1 was on, but the run recorded no %2 (it ended %3).")
        .arg(ticked, recordsName(records), status);
}

QString recordingText(Source source, Records records) {
    if (source == Source::Snapshot) {
        return records == Records::Memory
                   ? tr("This device of the snapshot has no events in its trace.")
                   : tr("A PyTorch memory snapshot records allocations, not steps, operators or "
                        "kernels: its memory over time is in the Memory tab, each allocation "
                        "with the code that made it.");
    }
    if (records == Records::Ranks) {
        return source == Source::Trace
                   ? tr("No rank of this profiler trace has collectives (NCCL kernels, or gloo's "
                        "gloo:* spans): there is nothing to match across ranks. Its ranks' "
                        "analyses are above its Breakdown.")
                   : tr("This recording of PyTorch's is one process's: it has no ranks.");
    }
    if (source == Source::Trace) {
        switch (records) {
            case Records::Steps:
                return tr(
                    "This profiler trace has no ProfilerStep# ranges: record it with a "
                    "torch.profiler schedule and call prof.step() after each step to "
                    "see its steps here.");
            case Records::Memory:
                return tr(
                    "A PyTorch profiler trace holds no allocations StepScope reads: open a "
                    "memory snapshot of the same run (torch.cuda.memory._dump_snapshot) "
                    "to see its memory here.");
            default:
                return tr(
                    "This rank's profiler trace holds no kernels, host operators or "
                    "runtime calls.");
        }
    }
    return tr("This recording of PyTorch's holds no %1.").arg(recordsName(records));
}

}  // namespace

QString missingRecordsText(const RunDocument* document, Records records) {
    if (!document) {
        return tr("No run selected: pick one in the Runs list or open a run file.");
    }
    const Source source = sourceOf(*document);
    return source == Source::Ours ? ourRunText(*document, records) : recordingText(source, records);
}

QString missingRecordsNote(const RunDocument* document, Records records) {
    if (!document) {
        return tr("No run selected");
    }
    const Source source = sourceOf(*document);
    if (source == Source::Snapshot && records != Records::Memory) {
        // Short: it stands in the middle of a chart that may be narrow.
        return tr("A snapshot has no %1")
            .arg(records == Records::Operators ? tr("operators") : recordsName(records));
    }
    if (source == Source::Trace && records == Records::Memory) {
        return tr("A profiler trace has no memory trace");
    }
    if (records == Records::Ranks) {
        if (source == Source::Trace) {
            return tr("No collectives in this trace");
        }
        if (source != Source::Ours || document->result.config.ranks <= 1) {
            return tr("Not a distributed run");
        }
        return document->live ? tr("No rank has finished a step yet") : tr("No rank's steps");
    }
    if (source == Source::Trace && records == Records::Steps) {
        return tr("No profiler steps in this trace");
    }
    const bool arriving =
        document->live &&
        (records == Records::Steps || !tickedOptions(document->result.config, records).isEmpty());
    if (arriving) {
        if (records == Records::Steps) {
            return tr("No steps measured yet");
        }
        QString text = tr("%1 when the run ends").arg(arrives(records));
        text[0] = text[0].toUpper();
        return text;
    }
    return records == Records::Steps ? tr("No steps measured")
                                     : tr("No %1 in this run").arg(recordsName(records));
}

}  // namespace stepscope::ui
