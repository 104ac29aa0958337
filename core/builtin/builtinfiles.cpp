#include "core/builtin/builtinfiles.h"

#include <QFile>

namespace attnscope {

namespace {

std::shared_ptr<const std::string> resourceFile(const QString& folder, std::string_view name)
{
    QFile file(QStringLiteral(":/") + folder + QLatin1Char('/') + QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())));
    if (!file.open(QIODevice::ReadOnly)) return nullptr;
    const QByteArray bytes = file.readAll();
    return std::make_shared<const std::string>(bytes.constData(), static_cast<std::size_t>(bytes.size()));
}

} // namespace

std::shared_ptr<const std::string> builtinModelFile(std::string_view name)
{
    if (name != "config.json" && name != "model.safetensors" && name != "vocab.txt") return nullptr;
    return resourceFile(QStringLiteral("builtin-model"), name);
}

std::shared_ptr<const std::string> builtinTranslatorFile(std::string_view name)
{
    if (name != "config.json" && name != "model.safetensors" && name != "vocab.txt" && name != "lexicon.tsv") return nullptr;
    return resourceFile(QStringLiteral("builtin-translator"), name);
}

std::shared_ptr<const std::string> builtinRecurrentFile(std::string_view name)
{
    if (name != "config.json" && name != "model.safetensors" && name != "vocab.txt") return nullptr;
    return resourceFile(QStringLiteral("builtin-rnn"), name);
}

} // namespace attnscope
