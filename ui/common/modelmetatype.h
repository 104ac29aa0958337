#pragma once
// A model as a Qt meta-type, so it can travel in a queued signal (a trained snapshot, a model opened in the
// background). Declared once, here, and included by every header whose signals carry one: the declaration
// must be seen before Qt first instantiates the type's id.
#include <QMetaType>

#include "core/model/model.h"
#include "core/model/recurrentmodel.h"

Q_DECLARE_METATYPE(attnscope::ModelPtr)
Q_DECLARE_METATYPE(attnscope::RecurrentModelPtr)
