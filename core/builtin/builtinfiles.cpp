#include "builtin/builtinfiles.h"

#include <QFile>

namespace attnscope {

std::shared_ptr<const std::string> builtinModelFile(std::string_view name)
{
    if (name != "config.json" && name != "model.safetensors" && name != "vocab.txt") return nullptr;
    QFile file(QStringLiteral(":/builtin-model/") + QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())));
    if (!file.open(QIODevice::ReadOnly)) return nullptr;
    const QByteArray bytes = file.readAll();
    return std::make_shared<const std::string>(bytes.constData(), static_cast<std::size_t>(bytes.size()));
}

} // namespace attnscope
